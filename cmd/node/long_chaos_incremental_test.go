//go:build long

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

// TestChaosClusterIncrementalJetStream is `node chaos cluster` with
// incremental checkpoints, two in flight: three real node processes whose
// checkpoints go to the JetStream store (with each node's local copy), a
// node running tasks SIGKILLed and restarted, the job's output verified
// exactly once. How many checkpoints wrote deltas is logged, not asserted:
// a delta needs a checkpoint completed since the start or the restore
// before its barrier, and fewer than half of a group's keys changed since,
// which a busy machine may not give a job this short (a loaded run wrote
// none of 7); TestIncrementalCheckpointStateBytes asserts deltas.
func TestChaosClusterIncrementalJetStream(t *testing.T) {
	t.Parallel()
	cfg := defaultChaosCluster()
	cfg.Exe = buildNode(t)
	cfg.Keys, cfg.Incremental, cfg.MaxConcurrent = 40000, true, 2
	if err := cfg.check(0); err != nil {
		t.Fatal(err)
	}
	plan := planClusterRun(chaosClusterIncrementalSeed, cfg.Plan)
	if !plan.Restart || plan.KillCoordinator {
		t.Fatalf("seed %d does not plan a worker restarted after its kill: %+v", plan.Seed, plan)
	}
	r := chaosClusterRun(context.Background(), cfg, plan)
	if !r.OK {
		t.Fatalf("%s\n%s", r.line(cfg), r.Detail)
	}
	t.Log(r.line(cfg))
	if r.Victim == "" {
		t.Errorf("the job ended before the kill at %v (it took %v)", plan.KillAfter, r.Took.Round(time.Millisecond))
	}
}
