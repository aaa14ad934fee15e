package main

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestChaosIncrementalExactlyOnce is TestChaosExactlyOnce with incremental
// checkpoints: every restore after a kill reads key-group chains (whole
// sections and deltas of older checkpoints), and the output must still be
// exactly one undisturbed run's.
func TestChaosIncrementalExactlyOnce(t *testing.T) {
	t.Parallel()
	const seed = 43
	r := chaosRun(context.Background(), seed, weir.CheckpointUnaligned, 400000, 20000, 2, 300*time.Millisecond, 20*time.Millisecond, 0.02,
		checkpointLimits{maxConcurrent: 1, incremental: true})
	t.Logf("seed %d: %+v", seed, r)
	if !r.OK {
		t.Fatalf("seed %d: %s", seed, r.Error)
	}
	if r.Kills == 0 || r.Restarts == 0 {
		t.Fatalf("seed %d: %d kills and %d restarts: the run was not disturbed", seed, r.Kills, r.Restarts)
	}
}
