package node

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/metrics"
)

// restartTally is what a coordinated job restarted before this coordinator
// ran it: the restarts its earlier coordinators recorded in the job's
// record, plus the takeover itself (the whole job restored from its latest
// checkpoint). persisted is the total last written to the record.
type restartTally struct {
	mu        sync.Mutex
	base      int
	causes    map[string]int
	persisted int
}

// inherit adds restarts counted before this coordinator, by cause.
func (t *restartTally) inherit(n int, causes map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.base += n
	if t.causes == nil {
		t.causes = map[string]int{}
	}
	for c, k := range causes {
		t.causes[c] += k
	}
}

// restarts is the job's restarts so far, earlier coordinators' included,
// and their causes.
func (cj *coordJob) restarts() (int, map[string]int) {
	sv := cj.job.Supervision()
	cj.tally.mu.Lock()
	defer cj.tally.mu.Unlock()
	causes := maps.Clone(cj.tally.causes)
	if causes == nil && len(sv.Causes) > 0 {
		causes = map[string]int{}
	}
	for c, k := range sv.Causes {
		causes[c] += k
	}
	return cj.tally.base + sv.Restarts, causes
}

// tookOver counts the takeover of job rec's coordination as a restart of
// the whole job (cause coordinator_lost) on top of what its record holds.
func (a *Agent) tookOver(name string, recorded int, causes map[string]int) {
	a.mu.Lock()
	cj := a.coord[name]
	a.mu.Unlock()
	if cj == nil {
		return
	}
	cj.tally.inherit(recorded, causes)
	cj.tally.inherit(1, map[string]int{metrics.CauseCoordinatorLost: 1})
	a.node.Metrics().CountRestart(name, metrics.CauseCoordinatorLost)
	a.persistRestarts(cj)
}

// persistRestarts writes the job's restart count into its record when it
// changed, so that a coordinator taking over later, and `node status` after
// the job ended, count them. It writes only a running record this node
// coordinates, at the revision it read: the record of a job that ended
// meanwhile is never written back to running.
func (a *Agent) persistRestarts(cj *coordJob) {
	n, causes := cj.restarts()
	cj.tally.mu.Lock()
	changed := n != cj.tally.persisted
	cj.tally.mu.Unlock()
	if !changed || !a.holds(cj.name) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, rev, err := a.jobs.Get(ctx, cj.name)
	if err != nil {
		a.log.Warn().Err(err).Str("job", cj.name).Msg("read the job's record to count its restarts")
		return
	}
	if rec.State != cluster.JobRunning || rec.Coordinator != a.cfg.ID {
		return
	}
	rec.Restarts, rec.RestartCauses = n, causes
	if _, err := a.jobs.Update(ctx, rec, rev); err != nil {
		if !errors.Is(err, cluster.ErrJobChanged) {
			a.log.Warn().Err(err).Str("job", cj.name).Msg("record the job's restarts")
		}
		return // changed meanwhile: the next progress tick tries again
	}
	cj.tally.mu.Lock()
	cj.tally.persisted = n
	cj.tally.mu.Unlock()
}
