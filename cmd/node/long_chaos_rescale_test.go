//go:build long

package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestChaosRescaleExactlyOnce runs `node chaos rescale` for two seeds:
// keycount under actor kills and random live rescales of count, verified
// exactly once and in order. Seed 12 (unaligned) lets a removed instance
// finish before a kill aborts its rescale; before the job forgot that finish
// on the abort, a later kill of the restarted instance restarted nothing and
// the run hung (here: past its limit). How many steps commit or abort
// depends on timing: each is logged, and each step must have an outcome.
// The limit is 3 minutes: at a load average of 20 on 2 cores, a run that
// was still making progress (sources done, the final checkpoint pending)
// was cut off at 1 minute.
func TestChaosRescaleExactlyOnce(t *testing.T) {
	t.Parallel()
	c := chaosRescaleConfig{Records: 150000, Keys: 100, SleepMs: 0.02, Steps: 3, MaxP: 4, Gap: 250 * time.Millisecond,
		KillEvery: 250 * time.Millisecond, Interval: 50 * time.Millisecond, Parallelism: 2, RunTimeout: 3 * time.Minute, Diag: os.Stderr,
		Incremental: false} // checkpoints written whole; the make chaos line with --checkpoint-incremental runs incremental ones
	for _, run := range []struct {
		seed int64
		mode weir.CheckpointMode
	}{{9, weir.CheckpointAligned}, {12, weir.CheckpointUnaligned}} {
		r := chaosRescaleRun(context.Background(), run.seed, run.mode, c)
		t.Logf("seed %d %s: %+v", run.seed, run.mode, r)
		if !r.OK {
			t.Fatalf("seed %d, mode %s, schedule %s: %s", run.seed, run.mode, r.Schedule, r.Error)
		}
		if r.Kills == 0 {
			t.Fatalf("seed %d: no kill: the run was not disturbed", run.seed)
		}
		if n := r.Committed + r.Aborted + r.Refused + r.Unchanged + r.NotRun; n != c.Steps {
			t.Fatalf("seed %d: %d step outcomes, want %d", run.seed, n, c.Steps)
		}
	}
}
