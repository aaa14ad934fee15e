package cli

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/weirstream/weir/cluster"
)

// errLeaseLapsed is why a coordinator stops setting a job up: its lease
// lapsed or was taken over meanwhile.
var errLeaseLapsed = errors.New("coordinator lease lapsed: another node may coordinate the job")

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

// renewLeases renews every lease this node holds. A job whose lease was
// lost is abandoned (another node coordinates it now) and set-ups in
// progress stop at their next check (holds).
func (a *agent) renewLeases(now time.Time) {
	a.mu.Lock()
	jobs := make([]string, 0, len(a.leased))
	for job := range a.leased {
		jobs = append(jobs, job)
	}
	a.mu.Unlock()
	for _, job := range jobs {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout/2)
		_, err := a.leases.Renew(ctx, job, a.cfg.ID, now)
		cancel()
		switch {
		case errors.Is(err, cluster.ErrLeaseLost):
			a.log.Error().Str("job", job).Msg("coordinator lease lost: another node coordinates the job")
			a.forgetLease(job)
			a.mu.Lock()
			cj := a.coord[job]
			a.mu.Unlock()
			if cj != nil {
				cj.job.Abandon("coordinator lease lost")
			}
		case err != nil:
			a.log.Warn().Err(err).Str("job", job).Msg("renew coordinator lease")
		}
	}
}

// acquired records that this node holds job's lease: renewLeases renews it.
func (a *agent) acquired(job string) {
	a.mu.Lock()
	a.leased[job] = true
	a.mu.Unlock()
}

// forgetLease stops renewing job's lease without releasing it (it may be
// another node's by now).
func (a *agent) forgetLease(job string) {
	a.mu.Lock()
	delete(a.leased, job)
	a.mu.Unlock()
}

// release gives job's lease up (the job ended or failed to start here).
func (a *agent) release(ctx context.Context, job string) {
	a.forgetLease(job)
	if err := a.leases.Release(ctx, job, a.cfg.ID); err != nil {
		a.log.Warn().Err(err).Str("job", job).Msg("release coordinator lease")
	}
}

// holds reports whether this node may still act as job's coordinator: its
// last acquire or renewal of the lease is within the heartbeat timeout, the
// time after which another node may take the lease over.
func (a *agent) holds(job string) bool {
	_, ok := a.leases.Holding(job, a.cfg.ID, time.Now(), a.cfg.HeartbeatTimeout)
	return ok
}
