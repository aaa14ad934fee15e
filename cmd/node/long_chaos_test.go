//go:build long

package main

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestChaosExactlyOnce kills random task and channel actors every 300 ms while
// keycount runs with checkpoints, in both modes, and verifies the committed
// output is exactly one undisturbed run's. The seed is fixed; a failure names it.
// Its checkpoints are written whole (TestChaosIncrementalExactlyOnce runs
// incremental ones, node run's default).
func TestChaosExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			const seed = 42
			r := chaosRun(context.Background(), seed, mode, 300000, 100, 2, 300*time.Millisecond, 20*time.Millisecond, 0.01, checkpointLimits{maxConcurrent: 1, incremental: false})
			t.Logf("seed %d: %+v", seed, r)
			if !r.OK {
				t.Fatalf("seed %d, mode %s: %s", seed, mode, r.Error)
			}
			if r.Kills == 0 || r.Restarts == 0 {
				t.Fatalf("seed %d: %d kills and %d restarts: the run was not disturbed", seed, r.Kills, r.Restarts)
			}
		})
	}
}
