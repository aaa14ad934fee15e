package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
)

// defaultPlacementTimeout is how long a job that does not fit waits for
// slots by default: long enough for a restarted node to rejoin and for
// several heartbeat timeouts, short of `node submit`'s wait for an answer.
const defaultPlacementTimeout = 30 * time.Second

// maxPlacementTimeout bounds --placement-timeout.
const maxPlacementTimeout = 24 * time.Hour

// errStopping is why a set-up ends when the node stops.
var errStopping = errors.New("node stopping")

// waitSettled waits until this node has run for a heartbeat timeout. Every
// live node heartbeats every quarter of that timeout, so by then this node
// has heard from every node the others count as alive; before it, a node
// that has just (re)started sees only itself and would place a whole job on
// its own slots. (Asking the nodes for the membership instead would not
// tell a slow node from a dead one any sooner than the timeout.)
func (a *agent) waitSettled(job string) error {
	d := time.Until(a.started.Add(a.cfg.HeartbeatTimeout))
	if d <= 0 {
		return nil
	}
	a.setWaiting(job, "learning the cluster's membership (the node has just started)")
	a.log.Info().Str("job", job).Dur("settle", d).Msg("learning the cluster's membership before placing the job")
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.quit:
		return errStopping
	case <-t.C:
		return nil
	}
}

// placeJob places every task of job p (named name) on the live nodes,
// counting the slots its own running tasks hold as free (they are
// replaced). While the job does not fit it waits, with backoff, for nodes
// to join or slots to free, and fails after --placement-timeout with the
// reason. The node must keep the job's lease meanwhile.
func (a *agent) placeJob(name string, p *plan.Job) (map[cluster.TaskRef]string, []cluster.Heartbeat, error) {
	defer a.setWaiting(name, "")
	if err := a.waitSettled(name); err != nil {
		return nil, nil, err
	}
	wait := cluster.PlacementWait{Timeout: a.cfg.PlacementTimeout, First: a.cfg.HeartbeatTimeout / 4, Max: a.cfg.HeartbeatTimeout}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		if !a.holds(name) {
			return nil, nil, errLeaseLapsed
		}
		nodes := a.placementNodes()
		placed, err := placeAll(name, p, nodes)
		if err == nil {
			if attempt > 0 {
				a.log.Info().Str("job", name).Int("attempts", attempt+1).Dur("waited", time.Since(start)).Msg("job placed after waiting for slots")
			}
			return placed, nodes, nil
		}
		if !cluster.Waitable(err) {
			return nil, nil, err
		}
		d, giveUp := wait.Next(start, time.Now(), attempt)
		if giveUp {
			return nil, nil, fmt.Errorf("%w (waited %v for nodes or free slots: --placement-timeout %v)",
				err, time.Since(start).Round(time.Millisecond), a.cfg.PlacementTimeout)
		}
		a.setWaiting(name, "free slots: "+err.Error())
		a.log.Warn().Str("job", name).Err(err).Int("attempt", attempt+1).Dur("retry_in", d).
			Dur("placement_timeout", a.cfg.PlacementTimeout).Msg("job does not fit on the live nodes: waiting for nodes to join or slots to free")
		t := time.NewTimer(d)
		select {
		case <-a.quit:
			t.Stop()
			return nil, nil, errStopping
		case <-t.C:
		}
	}
}

// placeAll places every task of job p (named name) over nodes, the job's
// pipelines together, counting the slots the job's own running tasks hold
// as free: a submission or a takeover replaces all of them.
func placeAll(name string, p *plan.Job, nodes []cluster.Heartbeat) (map[cluster.TaskRef]string, error) {
	var tasks []cluster.TaskRef
	for _, op := range p.Operators {
		for i := 0; i < op.Parallelism; i++ {
			tasks = append(tasks, cluster.TaskRef{Operator: op.Name, Instance: i})
		}
	}
	return cluster.PlaceGrouped(tasks, cluster.JobSlots(nodes, name), nil, pipelines(p))
}

// setWaiting records why job waits to be placed here ("": it no longer
// waits), for `node status`.
func (a *agent) setWaiting(job, why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if why == "" {
		delete(a.placing, job)
		return
	}
	a.placing[job] = why
}

// placementNodes are the live nodes a new job may use.
func (a *agent) placementNodes() []cluster.Heartbeat {
	nodes := a.alive()
	for _, n := range nodes {
		if n.Node == a.cfg.ID {
			return nodes
		}
	}
	// This node's own heartbeat may not have come back yet.
	return append(nodes, a.heartbeat())
}
