package node

import (
	"slices"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/coord"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/store"
)

// placeJob places every task of job p (named name) on the live nodes,
// counting the slots its own running tasks hold as free (they are
// replaced). The core decides each step: wait until the node has learned
// the membership (or, restoring, until the live nodes hold every key group
// of the checkpoint: tried again whenever a node joins), try, wait with
// backoff while the job does not fit, give up after the placement timeout
// with the reason or when the lease lapsed. Tasks go where the nodes hold
// their state of checkpoint restored, the one the job restores from (0:
// none), which stores stored (see storedState). It returns the placement, the nodes it was made over
// and the set-up's next step (Prepare, Deploy or GiveUp).
func (a *Agent) placeJob(name string, p *plan.Job, restored uint64, stored map[string]placement.Stored) (map[task.ID]string, []cluster.Heartbeat, coord.Action, error) {
	for {
		joined := a.joinedSignal() // before reading the nodes: a join after it wakes the wait
		nodes := a.placementNodes()
		var missing []string
		if restored != 0 {
			missing = placement.MissingHeld(name, restored, stored, nodes)
		}
		a.mu.Lock()
		act := a.core.TryPlace(time.Now(), name, restored != 0 && len(missing) == 0)
		a.mu.Unlock()
		switch act.Kind {
		case coord.GiveUp:
			return nil, nil, act, act.Err
		case coord.Wait:
			ev := a.log.Info().Str("job", name).Dur("retry_in", act.After).Str("why", act.Reason)
			if restored != 0 {
				ev = ev.Uint64("checkpoint", restored).Int("sections_not_held", len(missing))
			}
			ev.Msg("job waits to be placed (tried again when a node joins)")
			if err := a.sleepOrJoin(act.After, joined); err != nil {
				return nil, nil, act, err
			}
			continue
		}
		if act.Reason != "" {
			a.log.Info().Str("job", name).Uint64("checkpoint", restored).Int("nodes", len(nodes)).Str("why", act.Reason).
				Msg("placing the job before the settle period ends")
		}
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
func (a *Agent) sleep(d time.Duration) error { return a.sleepOrJoin(d, nil) }

// sleepOrJoin waits d or until joined is closed (a node joined), or fails
// with coord.ErrStopping when the agent stops first.
func (a *Agent) sleepOrJoin(d time.Duration, joined <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.quit:
		return coord.ErrStopping
	case <-t.C:
	case <-joined:
	}
	return nil
}

// joinedSignal is closed when the next node joins (see nodeJoined).
func (a *Agent) joinedSignal() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.joined
}

// nodeJoined wakes whatever waits for a node to join.
func (a *Agent) nodeJoined() {
	a.mu.Lock()
	defer a.mu.Unlock()
	close(a.joined)
	a.joined = make(chan struct{})
}

// storedState is what checkpoint m stores per operator, as the nodes'
// local copies count it (see placement.Stored and store.Mirror's index):
// key groups whole or as a chain, operator state, and the channel state m
// wrote itself; nil without a checkpoint.
func storedState(m *store.Manifest) map[string]placement.Stored {
	if m == nil {
		return nil
	}
	out := map[string]placement.Stored{}
	for _, t := range m.Tasks {
		s := out[t.Operator]
		for g := range t.KeyGroups {
			s.KeyGroups = append(s.KeyGroups, g)
		}
		for g := range t.KeyGroupChains {
			s.KeyGroups = append(s.KeyGroups, g)
		}
		if t.OperatorState != nil {
			s.OtherBytes += t.OperatorState.Size
		}
		for _, c := range t.Channels {
			if c.Blob.Name != "" {
				s.OtherBytes += c.Blob.Size
			}
		}
		out[t.Operator] = s
	}
	for op := range out {
		slices.Sort(out[op].KeyGroups)
	}
	return out
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
