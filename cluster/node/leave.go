package node

import (
	"context"
	"time"

	"github.com/weirstream/weir/cluster/coord"
)

// Leave exits the cluster gracefully, as the core lays out: the jobs it
// coordinates are handed over (lease released), the other nodes are told,
// so they move this node's tasks elsewhere (restored from the latest
// checkpoint) and take over those jobs at once instead of after a
// heartbeat timeout; then its own parts of jobs stop. Shutdown follows.
func (a *Agent) Leave() {
	a.mu.Lock()
	acts := a.core.Leave()
	a.mu.Unlock()
	for _, act := range acts {
		switch act.Kind {
		case coord.HandOver:
			a.mu.Lock()
			cj := a.coord[act.Job]
			a.mu.Unlock()
			if cj == nil {
				continue
			}
			cj.job.Abandon(act.Reason)
			select {
			case <-cj.job.Done():
			case <-time.After(partStopTimeout):
				a.log.Warn().Str("job", cj.name).Msg("coordinator did not stop in time; releasing its lease anyway")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			a.release(ctx, cj.name)
			cancel()
		case coord.AnnounceLeaving:
			if err := a.nc.Publish(leavingSubject(a.cfg.ID), nil); err != nil {
				a.log.Warn().Err(err).Msg("announce leaving")
			}
			if err := a.nc.Flush(); err != nil {
				a.log.Warn().Err(err).Msg("announce leaving")
			}
		case coord.EndParts:
			a.endParts()
		}
	}
}

// endParts stops this node's parts of jobs.
func (a *Agent) endParts() {
	a.mu.Lock()
	var names []string
	for name := range a.parts {
		names = append(names, name)
	}
	a.mu.Unlock()
	for _, name := range names {
		if err := a.endPart(name); err != nil {
			a.log.Warn().Err(err).Msg("stop job part")
		}
	}
}
