package keycount

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func TestKeycountWithCheckpoints(t *testing.T) {
	const n, k = 30000, 50
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			g, err := Build(Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.02})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
				Mode: mode, Interval: 50 * time.Millisecond, StateDir: filepath.Join(dir, "state")}))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Checkpoints) < 2 {
				t.Fatalf("%d checkpoints, want several", len(res.Checkpoints))
			}
			t.Logf("%d checkpoints, last %+v", len(res.Checkpoints), res.Checkpoints[len(res.Checkpoints)-1])
			verifyCounts(t, out, n, k)
		})
	}
}
