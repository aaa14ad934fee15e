package cli

import (
	"context"
	"time"
)

// leave exits the cluster gracefully: the jobs it coordinates are handed
// over (lease released), the other nodes are told, so they move this node's
// tasks elsewhere (restored from the latest checkpoint) and take over those
// jobs at once instead of after a heartbeat timeout; then its own parts of
// jobs stop.
func (a *agent) leave() {
	a.mu.Lock()
	a.leaving = true
	a.mu.Unlock()
	for _, cj := range a.coordJobs() {
		cj.job.Abandon("node leaving")
		select {
		case <-cj.job.Done():
		case <-time.After(partStopTimeout):
			a.log.Warn().Str("job", cj.name).Msg("coordinator did not stop in time; releasing its lease anyway")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		a.release(ctx, cj.name)
		cancel()
	}
	if err := a.nc.Publish(leavingSubject(a.cfg.ID), nil); err != nil {
		a.log.Warn().Err(err).Msg("announce leaving")
	}
	if err := a.nc.Flush(); err != nil {
		a.log.Warn().Err(err).Msg("announce leaving")
	}
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
