package weir_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
)

// TestRunDefaultsAndHowNodeRunDiffers pins what weir.Run does without
// options (no checkpoints, logs discarded, the default supervision and
// runtime) and `node run`'s checkpoint defaults (unaligned every second into
// ./weir-state, keeping 3, asynchronous and incremental: SyncSnapshots and
// FullCheckpoints false; the cli tests pin that `node run` takes them),
// and checks both on a real run: without options Run writes no state
// directory and takes no checkpoint; with node run's checkpoint defaults it
// writes ./weir-state and commits a final checkpoint.
func TestRunDefaultsAndHowNodeRunDiffers(t *testing.T) {
	cfg := weir.DefaultRunConfig()
	if cfg.Checkpoint != (weir.CheckpointConfig{Mode: weir.CheckpointNone}) {
		t.Errorf("Run's default checkpoints %+v, want none", cfg.Checkpoint)
	}
	if lvl := cfg.Logger.GetLevel(); lvl != zerolog.Disabled {
		t.Errorf("Run's default logger at level %v, want disabled", lvl)
	}
	if cfg.Supervision == nil || *cfg.Supervision != weir.DefaultSupervision() {
		t.Errorf("Run's default supervision %+v, want %+v", cfg.Supervision, weir.DefaultSupervision())
	}
	if cfg.Runtime != (weir.RuntimeOptions{}) || cfg.Restore != "" || cfg.Duration != 0 || cfg.Drain {
		t.Errorf("Run's defaults %+v, want zero runtime options, no restore, duration or drain", cfg)
	}
	nodeRun := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Second, Timeout: 30 * time.Second,
		Retain: 3, MaxConcurrent: 1, StateDir: "./weir-state"}
	if got := weir.DefaultCheckpointConfig(); got != nodeRun {
		t.Errorf("node run's checkpoint defaults %+v, want %+v", got, nodeRun)
	}

	t.Chdir(t.TempDir())
	res, err := weir.Run(context.Background(), defaultsGraph())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checkpoints) != 0 {
		t.Errorf("Run without options took %d checkpoints, want none", len(res.Checkpoints))
	}
	if _, err := os.Stat("weir-state"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Run without options: ./weir-state: %v, want it absent", err)
	}
	res, err = weir.Run(context.Background(), defaultsGraph(), weir.WithCheckpoints(weir.DefaultCheckpointConfig()))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Checkpoints); n == 0 || !res.Checkpoints[n-1].Final {
		t.Errorf("Run with node run's checkpoints: %+v, want a final checkpoint last", res.Checkpoints)
	}
	if st, err := os.Stat("weir-state"); err != nil || !st.IsDir() {
		t.Fatalf("Run with node run's checkpoints: ./weir-state: %v, want a directory", err)
	}
}

// defaultsGraph counts 1000 records over 10 keys.
func defaultsGraph() *weir.Graph {
	g := weir.NewGraph("defaults")
	src := weir.Generate(g, "source", 1000, func(i int64) int64 { return i })
	n := weir.NewValueState[int64](g, "n")
	counts := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v % 10 }), "count",
		func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error {
			n.Set(ctx, n.Get(ctx)+1)
			out.Emit(n.Get(ctx))
			return nil
		}, weir.WithState(n))
	weir.ToSink(counts, "sink", weir.DiscardSink[int64](nil))
	return g
}
