//go:build long

package main

import (
	"context"
	"testing"
	"time"
)

// chaosClusterTestSeeds are the short soak's runs: seed 1 kills n1, the
// coordinator, with NATS apart and restarts it; seed 3 kills the
// coordinator n3 with NATS in n1 and does not restart it; seed 15 kills a
// worker with NATS apart.
var chaosClusterTestSeeds = []int64{1, 3, 15}

// TestChaosClusterShort is `node chaos cluster` for three seeds: three real
// node processes, one SIGKILLed while keycount runs, the job's output
// verified exactly once. A failure prints the seed and the nodes' logs.
// Its checkpoints are written whole (TestChaosClusterIncrementalJetStream
// runs incremental ones, the default).
func TestChaosClusterShort(t *testing.T) {
	t.Parallel()
	cfg := defaultChaosCluster()
	cfg.Exe = buildNode(t)
	cfg.Incremental = false
	var coord, apart, restart, stay bool
	for _, seed := range chaosClusterTestSeeds {
		p := planClusterRun(seed, cfg.Plan)
		coord, apart = coord || p.KillCoordinator, apart || p.NATSApart
		restart, stay = restart || p.Restart, stay || !p.Restart
	}
	if !coord || !apart || !restart || !stay {
		t.Fatalf("seeds %v do not cover a coordinator kill, NATS apart, a restart and none", chaosClusterTestSeeds)
	}
	for _, seed := range chaosClusterTestSeeds {
		r := chaosClusterRun(context.Background(), cfg, planClusterRun(seed, cfg.Plan))
		if !r.OK {
			t.Errorf("%s\n%s", r.line(cfg), r.Detail)
			continue
		}
		t.Log(r.line(cfg))
		if r.Victim == "" {
			t.Errorf("seed %d: the job ended before the kill at %v (it took %v)", seed, r.Plan.KillAfter, r.Took.Round(time.Millisecond))
		}
	}
}
