package main

import (
	"testing"
)

// TestPlanClusterRun checks the seeded choices over many seeds: kill times
// inside the window, a coordinator that may be killed when the plan kills
// it, n1 asked to coordinate and killed only when NATS runs apart, and about
// half the runs killing the coordinator and half restarting the victim.
func TestPlanClusterRun(t *testing.T) {
	cfg := defaultChaosCluster().Plan
	const n = 2000
	coord, restart, apart := 0, 0, 0
	for seed := int64(1); seed <= n; seed++ {
		p := planClusterRun(seed, cfg)
		if p != planClusterRun(seed, cfg) {
			t.Fatalf("seed %d: two plans differ", seed)
		}
		if p.KillAfter < cfg.KillMin || p.KillAfter > cfg.KillMax {
			t.Fatalf("seed %d: kill after %v, outside %v…%v", seed, p.KillAfter, cfg.KillMin, cfg.KillMax)
		}
		if p.KillCoordinator && !p.killable(p.Coordinator) {
			t.Fatalf("seed %d: plans to kill coordinator %s, which runs NATS", seed, p.Coordinator)
		}
		if p.killable("n1") != p.NATSApart {
			t.Fatalf("seed %d: n1 killable %v with NATS apart %v", seed, p.killable("n1"), p.NATSApart)
		}
		coord += btoi(p.KillCoordinator)
		restart += btoi(p.Restart)
		apart += btoi(p.NATSApart)
	}
	for what, got := range map[string]int{"coordinator kills": coord, "restarts": restart, "NATS apart": apart} {
		if got < n*4/10 || got > n*6/10 {
			t.Errorf("%s in %d of %d plans, want about half", what, got, n)
		}
	}
	for _, c := range []clusterPlanConfig{{NATS: natsInN1}, {NATS: natsApart}} {
		c.KillMin, c.KillMax = cfg.KillMin, cfg.KillMax
		for seed := int64(1); seed <= 100; seed++ {
			if p := planClusterRun(seed, c); p.NATSApart != (c.NATS == natsApart) {
				t.Fatalf("--nats %s, seed %d: NATS apart %v", c.NATS, seed, p.NATSApart)
			}
		}
	}
}

// TestClusterRunVictim checks whom a plan kills, given the status at the
// time of the kill.
func TestClusterRunVictim(t *testing.T) {
	t.Parallel()
	job := jobStatusView{Coordinator: "n1", Tasks: map[string]string{"source[0]": "n1", "count[0]": "n3"}}
	cases := []struct {
		name      string
		plan      clusterRunPlan
		job       jobStatusView
		want      string
		wantCoord bool
	}{
		{"coordinator, NATS apart", clusterRunPlan{NATSApart: true, KillCoordinator: true}, job, "n1", true},
		{"coordinator runs NATS", clusterRunPlan{KillCoordinator: true}, job, "", false},
		{"worker with tasks first", clusterRunPlan{NATSApart: true, Pick: 1}, job, "n3", false},
		{"worker never n1 with NATS", clusterRunPlan{Pick: 0}, jobStatusView{Coordinator: "n2"}, "n3", false},
		{"no coordinator yet", clusterRunPlan{NATSApart: true, KillCoordinator: true}, jobStatusView{}, "", false},
	}
	for _, c := range cases {
		got, coord := c.plan.victim(c.job)
		if got != c.want || coord != c.wantCoord {
			t.Errorf("%s: victim %q (coordinator %v), want %q (%v)", c.name, got, coord, c.want, c.wantCoord)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// chaosClusterIncrementalSeed plans a worker SIGKILLed 2.5 s into the job,
// with NATS apart, and started again at once with its working directory.
const chaosClusterIncrementalSeed = 4
