package main

import (
	"fmt"
	"math/rand"
	"time"
)

// NATS placements of a cluster chaos run.
const (
	natsInN1    = "n1"    // n1 embeds the server and is never killed
	natsApart   = "apart" // the server runs on its own; any node may be killed
	natsEither  = "mixed" // each run's seed picks one of the two
	clusterSize = 3
)

// clusterPlanConfig bounds the seeded choices of a cluster chaos run.
type clusterPlanConfig struct {
	NATS             string        // natsInN1, natsApart or natsEither
	KillMin, KillMax time.Duration // the kill comes this long after the job is accepted
}

// clusterRunPlan is what one seed decides for a cluster chaos run.
type clusterRunPlan struct {
	Seed      int64
	NATSApart bool
	// Coordinator is the node asked to coordinate the job.
	Coordinator string
	// KillCoordinator: the victim is the node that coordinates the job at
	// the time of the kill; otherwise a node that does not.
	KillCoordinator bool
	KillAfter       time.Duration
	Restart         bool // start the victim again at once, same id and workdir
	// Pick chooses among the candidate workers at the time of the kill.
	Pick int
}

// killable is whether node id may be killed: n1 only when it does not run
// the NATS server.
func (p clusterRunPlan) killable(id string) bool { return p.NATSApart || id != nodeID(1) }

// planClusterRun draws a run's choices from its seed. Half the runs kill the
// coordinator's node and half restart the victim.
func planClusterRun(seed int64, c clusterPlanConfig) clusterRunPlan {
	rng := rand.New(rand.NewSource(seed))
	p := clusterRunPlan{Seed: seed}
	switch c.NATS {
	case natsApart:
		p.NATSApart = true
	case natsEither:
		p.NATSApart = rng.Intn(2) == 1
	}
	p.KillCoordinator = rng.Intn(2) == 1
	p.Restart = rng.Intn(2) == 1
	p.KillAfter = c.KillMin + time.Duration(rng.Int63n(int64(c.KillMax-c.KillMin)+1))
	p.Pick = rng.Intn(clusterSize)
	var candidates []string
	for i := 1; i <= clusterSize; i++ {
		if id := nodeID(i); !p.KillCoordinator || p.killable(id) {
			candidates = append(candidates, id)
		}
	}
	p.Coordinator = candidates[rng.Intn(len(candidates))]
	return p
}

// checkClusterPlanConfig reports a bad --nats or kill window.
func checkClusterPlanConfig(c clusterPlanConfig) error {
	switch c.NATS {
	case natsInN1, natsApart, natsEither:
	default:
		return fmt.Errorf("--nats %q: want %s, %s or %s", c.NATS, natsInN1, natsApart, natsEither)
	}
	if c.KillMin <= 0 || c.KillMax < c.KillMin {
		return fmt.Errorf("kill window %v…%v: want 0 < --kill-min ≤ --kill-max", c.KillMin, c.KillMax)
	}
	return nil
}

// victim is the node to kill given the job's coordinator and where its
// tasks run at the time of the kill, and whether it is the coordinator's
// node; "" when no node fits (the coordinator's node runs NATS, or no
// other node may be killed).
func (p clusterRunPlan) victim(j jobStatusView) (string, bool) {
	if p.KillCoordinator {
		if j.Coordinator != "" && p.killable(j.Coordinator) {
			return j.Coordinator, true
		}
		return "", false
	}
	// A worker: prefer the nodes that run tasks.
	var withTasks, others []string
	for i := 1; i <= clusterSize; i++ {
		id := nodeID(i)
		if id == j.Coordinator || !p.killable(id) {
			continue
		}
		if runsTasks(j, id) {
			withTasks = append(withTasks, id)
		} else {
			others = append(others, id)
		}
	}
	if len(withTasks) == 0 {
		withTasks = others
	}
	if len(withTasks) == 0 {
		return "", false
	}
	return withTasks[p.Pick%len(withTasks)], false
}

// runsTasks reports whether node id runs any of job j's tasks.
func runsTasks(j jobStatusView, id string) bool {
	for _, node := range j.Tasks {
		if node == id {
			return true
		}
	}
	return false
}
