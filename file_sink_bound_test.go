package weir_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestFileSinkWithCheckpointsRefusesSeveralInstances: with checkpoints a
// file sink runs as one instance; a job that gives it two is refused before
// anything runs, naming the sink and why (it used to start, fail every
// instance's Open and restart until it gave up). Without checkpoints two
// instances append to the file.
func TestFileSinkWithCheckpointsRefusesSeveralInstances(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	build := func() *weir.Graph {
		g := weir.NewGraph("bound")
		nums := weir.Generate(g, "nums", 1000, func(i int64) int64 { return i })
		weir.ToSink(nums, "sink", weir.FileSink[int64](out), weir.Parallelism(2))
		return g
	}
	cc := weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 20 * time.Millisecond, StateDir: filepath.Join(dir, "state")}
	res, err := weir.Run(context.Background(), build(), weir.WithCheckpoints(cc))
	want := `operator "sink": file sink ` + out + `: with checkpoints it runs as one instance, not 2`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("run with checkpoints: %v, want an error saying %q", err, want)
	}
	if res != nil && res.Restarts > 0 {
		t.Fatalf("refused after %d restarts: want it refused before anything ran", res.Restarts)
	}
	if _, err := weir.Run(context.Background(), build()); err != nil {
		t.Fatalf("run without checkpoints: %v", err)
	}
}
