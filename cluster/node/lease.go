package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/coord"
)

// lockedFence is the node's cluster.Fence, shared by the NATS handlers.
type lockedFence struct {
	mu sync.Mutex
	f  *cluster.Fence
}

// Admit is cluster.Fence.Admit under the lock.
func (l *lockedFence) Admit(job string, epoch uint64) (bool, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Admit(job, epoch)
}

// renewLeases renews every lease this node holds and hands the results to
// the core: a job whose lease could not be renewed is abandoned (another
// node takes it over) and set-ups in progress stop at their next step.
func (a *Agent) renewLeases(now time.Time) {
	a.mu.Lock()
	renewals := a.core.Renewals()
	a.mu.Unlock()
	for _, r := range renewals {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout/2)
		_, err := a.leases.Renew(ctx, r.Job, a.cfg.ID, now)
		cancel()
		switch {
		case errors.Is(err, cluster.ErrLeaseLost):
			a.log.Error().Str("job", r.Job).Msg("coordinator lease lost: another node coordinates the job")
		case err != nil:
			a.log.Warn().Err(err).Str("job", r.Job).Msg("renew coordinator lease")
		}
		a.mu.Lock()
		acts := a.core.LeaseRenewed(now, r.Job, err)
		var abandon []*coordJob
		var why []string
		for _, act := range acts {
			if cj := a.coord[act.Job]; act.Kind == coord.Abandon && cj != nil {
				abandon, why = append(abandon, cj), append(why, act.Reason)
			}
		}
		a.mu.Unlock()
		for i, cj := range abandon {
			cj.job.Abandon(why[i])
		}
	}
}

// acquire tries to take job's lease at now and hands the result to the
// core: Coordinate (won) or Drop (another node holds it).
func (a *Agent) acquire(ctx context.Context, job string, now time.Time) (coord.Action, error) {
	return a.acquireFrom(ctx, job, "", now)
}

// acquireFrom is acquire that also takes the live lease of dead, a node
// whose connection closed ("": none, see cluster.Leases.TakeOver).
func (a *Agent) acquireFrom(ctx context.Context, job, dead string, now time.Time) (coord.Action, error) {
	lease, ok, err := a.leases.TakeOver(ctx, job, a.cfg.ID, dead, now, a.cfg.HeartbeatTimeout)
	if err != nil {
		return coord.Action{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.LeaseAcquired(now, job, ok, lease.Epoch, lease.Node), nil
}

// release gives job's lease up (the job ended or failed to start here).
func (a *Agent) release(ctx context.Context, job string) {
	a.mu.Lock()
	a.core.ForgetLease(job)
	a.mu.Unlock()
	if err := a.leases.Release(ctx, job, a.cfg.ID); err != nil {
		a.log.Warn().Err(err).Str("job", job).Msg("release coordinator lease")
	}
}

// holds reports whether this node may still act as job's coordinator (see
// coord.Core.Holds).
func (a *Agent) holds(job string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.Holds(time.Now(), job)
}
