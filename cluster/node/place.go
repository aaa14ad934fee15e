package node

import (
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/coord"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
)

// placeJob places every task of job p (named name) on the live nodes,
// counting the slots its own running tasks hold as free (they are
// replaced). The core decides each step: wait until the node has learned
// the membership, try, wait with backoff while the job does not fit, give
// up after the placement timeout with the reason or when the lease lapsed.
// Tasks go where the nodes hold their state of checkpoint restored, the
// one the job restores from (0: none). It returns the placement, the nodes
// it was made over and the set-up's next step (Prepare, Deploy or GiveUp).
func (a *Agent) placeJob(name string, p *plan.Job, restored uint64) (map[task.ID]string, []cluster.Heartbeat, coord.Action, error) {
	for {
		a.mu.Lock()
		act := a.core.TryPlace(time.Now(), name)
		a.mu.Unlock()
		switch act.Kind {
		case coord.GiveUp:
			return nil, nil, act, act.Err
		case coord.Wait:
			a.log.Info().Str("job", name).Dur("retry_in", act.After).Str("why", act.Reason).Msg("job waits to be placed")
			if err := a.sleep(act.After); err != nil {
				return nil, nil, act, err
			}
			continue
		}
		nodes := a.placementNodes()
		var local map[task.ID][]placement.Copy
		if restored != 0 {
			local = placement.LocalFromHeld(p, restored, nodes)
		}
		placed, err := placement.PlaceJob(name, p, nodes, local)
		used := make([]string, 0, len(nodes))
		for _, n := range nodes {
			used = append(used, n.Node)
		}
		now := time.Now()
		a.mu.Lock()
		next := a.core.Placed(now, name, used, err)
		a.mu.Unlock()
		switch next.Kind {
		case coord.GiveUp:
			return nil, nil, next, next.Err
		case coord.Wait:
			a.log.Warn().Str("job", name).Err(err).Dur("retry_in", next.After).Dur("placement_timeout", a.cfg.PlacementTimeout).
				Msg("job does not fit on the live nodes: waiting for nodes to join or slots to free")
			if err := a.sleep(next.After); err != nil {
				return nil, nil, next, err
			}
			continue
		}
		if next.Attempt > 1 {
			a.log.Info().Str("job", name).Int("attempts", next.Attempt).Msg("job placed after waiting for slots")
		}
		return placed, nodes, next, nil
	}
}

// sleep waits d, or fails with coord.ErrStopping when the agent stops first.
func (a *Agent) sleep(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.quit:
		return coord.ErrStopping
	case <-t.C:
		return nil
	}
}

// placementNodes are the live nodes a new job may use.
func (a *Agent) placementNodes() []cluster.Heartbeat {
	nodes := a.alive()
	for _, n := range nodes {
		if n.Node == a.cfg.ID {
			return nodes
		}
	}
	// This node's own heartbeat may not have come back yet.
	return append(nodes, a.heartbeat())
}
