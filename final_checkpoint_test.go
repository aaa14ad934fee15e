package weir_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// TestFinalCheckpointAlignsWithTimeout runs keycount aligned with a 1 ms
// alignment timeout, which switches most checkpoints to unaligned. The final
// checkpoint must still align: every record reaches the committed output.
// Before the final checkpoint aligned, data it overtook reached the sink after
// its last commit and was lost in about one run of three.
func TestFinalCheckpointAlignsWithTimeout(t *testing.T) {
	const n, k, runs = 100000, 100, 3
	for run := range runs {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.jsonl")
		g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.005})
		if err != nil {
			t.Fatal(err)
		}
		res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
			Mode: weir.CheckpointAligned, AlignedTimeout: time.Millisecond, Interval: 100 * time.Millisecond,
			StateDir: filepath.Join(dir, "state")}))
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		last := res.Checkpoints[len(res.Checkpoints)-1]
		if !last.Final || last.Mode != "aligned" || last.InflightBuffers != 0 {
			t.Fatalf("run %d: last checkpoint %+v, want final, aligned, nothing in flight", run, last)
		}
		verifyKeycount(t, out, n, k)
	}
}
