package supervision

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// regionRun is where one region is in carrying out its stop and restart:
// which stopped tasks have not ended yet, whether the restart is due, which
// respawned tasks have not reported ready, and whether the recovery time is
// still to be recorded.
type regionRun struct {
	stopping   map[task.ID]int  // stopped tasks not yet ended → their incarnation
	restartDue bool             // the backoff passed; RestartRegion waits for stopping and manifest writes
	readying   map[task.ID]bool // respawned tasks that have not reported ready
	failedAt   time.Duration    // when the region was stopped (for the recovery time)
	waiting    bool             // running again, waiting for its first processed record
}

// taskRun is the supervisor's view of the job's task incarnations and of
// the checkpoint side: which incarnation of each task runs, which tasks ran
// on a node since lost, whether a manifest is being written, and the
// checkpoint a restart resumes from.
type taskRun struct {
	live    map[task.ID]int  // task → incarnation started and not ended
	lost    map[task.ID]bool // tasks whose node was lost since they started
	writing bool             // a checkpoint manifest is being written
	latest  uint64           // newest completed checkpoint (0: none)
}

func newTaskRun(latest uint64) taskRun {
	return taskRun{live: map[task.ID]int{}, lost: map[task.ID]bool{}, latest: latest}
}

// canonical returns the job's own name for t (its operator id filled in),
// and its region.
func (s *Supervisor) canonical(t task.ID) (task.ID, *region, bool) {
	r, ok := s.byTask[keyOf(t)]
	if !ok {
		return t, nil, false
	}
	return r.Tasks[slices.IndexFunc(r.Tasks, func(u task.ID) bool { return keyOf(u) == keyOf(t) })], r, true
}

// stop stops region r at logical time now: every task of it still running
// must end before it restarts. It returns the StopRegion to carry out.
func (s *Supervisor) stop(r *region, now time.Duration) StopRegion {
	r.state = Stopped
	act := StopRegion{Region: r.ID, Tasks: slices.Clone(r.Tasks)}
	if r.run.stopping == nil {
		r.run.stopping = map[task.ID]int{}
	}
	for _, t := range r.Tasks {
		gen, ok := s.tasks.live[t]
		if !ok {
			continue
		}
		if _, already := r.run.stopping[t]; !already {
			act.Alive = append(act.Alive, t)
		}
		r.run.stopping[t] = gen
		if s.tasks.lost[t] {
			act.Lost = append(act.Lost, t)
		}
	}
	r.run.restartDue, r.run.readying, r.run.waiting, r.run.failedAt = false, nil, false, now
	return act
}

// maybeRestart returns RestartRegion for r once its restart is due, every
// task of its stopped incarnation has ended and no manifest is being written
// (a manifest in flight decides which checkpoint is the latest).
func (s *Supervisor) maybeRestart(r *region) []Action {
	if s.failed || r.state != Stopped || !r.run.restartDue || len(r.run.stopping) > 0 || s.tasks.writing {
		return nil
	}
	r.state = Restoring
	r.run.restartDue = false
	r.run.readying = make(map[task.ID]bool, len(r.Tasks))
	for _, t := range r.Tasks {
		r.run.readying[t] = true
	}
	return []Action{RestartRegion{Region: r.ID, Tasks: slices.Clone(r.Tasks), Attempt: r.attempt, Checkpoint: s.tasks.latest}}
}

// OnTaskStarted records that incarnation gen of task t was spawned (at
// deploy, or carrying out RestartRegion).
func (s *Supervisor) OnTaskStarted(t task.ID, gen int) {
	t, _, ok := s.canonical(t)
	if !ok {
		return
	}
	s.tasks.live[t] = gen
	delete(s.tasks.lost, t)
}

// End is what the end of a task incarnation means.
type End int

const (
	// EndStopped: a task stopped by StopRegion ended (its region restarts
	// once all its stopped tasks ended: RestartRegion may follow).
	EndStopped End = iota
	// EndStale: a report about an incarnation that is not the running one,
	// or a task of no region (Ignored).
	EndStale
	// EndUnexpected: the running incarnation ended without being stopped
	// (stopped from outside, or finished). The caller reports a failure
	// (OnTaskFailed, or OnRestoreFailed while its region is restoring)
	// unless the task had finished its work.
	EndUnexpected
)

// String names the end for logs and scripted tests.
func (e End) String() string {
	switch e {
	case EndStopped:
		return "stopped"
	case EndStale:
		return "stale"
	case EndUnexpected:
		return "unexpected"
	}
	return fmt.Sprintf("end(%d)", int(e))
}

// OnTaskEnded records that incarnation gen of task t ended and says what
// that means.
func (s *Supervisor) OnTaskEnded(t task.ID, gen int) ([]Action, End) {
	t, r, ok := s.canonical(t)
	if !ok {
		return []Action{Ignored{Reason: fmt.Sprintf("end of %v: not a task of the job", t)}}, EndStale
	}
	if cur, live := s.tasks.live[t]; !live || cur != gen {
		return []Action{Ignored{Reason: fmt.Sprintf("end of %v incarnation %d: not the running incarnation", t, gen)}}, EndStale
	}
	delete(s.tasks.live, t)
	delete(s.tasks.lost, t)
	if want, stopping := r.run.stopping[t]; stopping && want == gen {
		delete(r.run.stopping, t)
		return s.maybeRestart(r), EndStopped
	}
	return nil, EndUnexpected
}

// OnNodeLost records that task t ran on a node now lost: the node will not
// confirm its stop. A task already being stopped is returned in StopLocally
// (the actor ends its stand-in itself, whose end it then reports); a task
// stopped later is listed in StopRegion.Lost.
func (s *Supervisor) OnNodeLost(t task.ID) []Action {
	t, r, ok := s.canonical(t)
	if !ok {
		return []Action{Ignored{Reason: fmt.Sprintf("node of %v lost: not a task of the job", t)}}
	}
	if _, live := s.tasks.live[t]; !live {
		return []Action{Ignored{Reason: fmt.Sprintf("node of %v lost: the task is not running", t)}}
	}
	s.tasks.lost[t] = true
	if _, stopping := r.run.stopping[t]; stopping {
		return []Action{StopLocally{Task: t}}
	}
	return nil
}

// OnManifestWriteStarted records that a checkpoint manifest is being written:
// no region restarts until it ends.
func (s *Supervisor) OnManifestWriteStarted() { s.tasks.writing = true }

// OnManifestWriteEnded records that the manifest write ended (written or
// failed) and returns the restarts that waited for it.
func (s *Supervisor) OnManifestWriteEnded() []Action {
	s.tasks.writing = false
	var acts []Action
	for _, r := range s.regions {
		acts = append(acts, s.maybeRestart(r)...)
	}
	return acts
}

// OnCheckpointCompleted records checkpoint id as the one regions restart
// from, and that the running regions made durable progress (OnProgress).
func (s *Supervisor) OnCheckpointCompleted(id uint64) {
	s.tasks.latest = max(s.tasks.latest, id)
	s.OnProgress()
}

// OnTaskReady records that the respawned task t is ready. It reports
// whether t belongs to a region being restored; when it is the last of its
// region, the region runs again (as OnRegionRestarted) and RegionReady says
// to wire and start it.
func (s *Supervisor) OnTaskReady(t task.ID, now time.Duration) (acts []Action, restoring bool) {
	t, r, ok := s.canonical(t)
	if !ok || r.state != Restoring || !r.run.readying[t] {
		return nil, false
	}
	delete(r.run.readying, t)
	if len(r.run.readying) > 0 {
		return nil, true
	}
	if ig := s.OnRegionRestarted(r.ID, now); len(ig) > 0 {
		return ig, true
	}
	r.run.waiting = true
	return []Action{RegionReady{Region: r.ID, Tasks: slices.Clone(r.Tasks)}}, true
}

// OnFirstRecord records that task t processed a record. The first one after
// its region ran again returns RecordRecovery: the time from the stop to now.
func (s *Supervisor) OnFirstRecord(t task.ID, now time.Duration) []Action {
	t, r, ok := s.canonical(t)
	if !ok || r.state != Running || !r.run.waiting {
		return nil
	}
	r.run.waiting = false
	return []Action{RecordRecovery{Region: r.ID, Task: t, Took: now - r.run.failedAt}}
}

// Stopping reports whether task t was stopped by StopRegion and has not
// ended yet.
func (s *Supervisor) Stopping(t task.ID) bool {
	t, r, ok := s.canonical(t)
	if !ok {
		return false
	}
	_, stopping := r.run.stopping[t]
	return stopping
}

// RegionOfTask returns the region of task t.
func (s *Supervisor) RegionOfTask(t task.ID) (int, bool) {
	_, r, ok := s.canonical(t)
	if !ok {
		return 0, false
	}
	return r.ID, true
}

// Restarting reports whether any region is stopped or being restored.
func (s *Supervisor) Restarting() bool {
	for _, r := range s.regions {
		if r.state != Running {
			return true
		}
	}
	return false
}

// RunState renders region's restart bookkeeping for scripted tests and dumps.
func (s *Supervisor) RunState(region int) string {
	r, ok := s.byID[region]
	if !ok {
		return fmt.Sprintf("region %d: no such region", region)
	}
	return fmt.Sprintf("%d:%v stopping=[%s] due=%v readying=[%s] waiting=%v writing=%v latest=%d",
		r.ID, r.state, joinTasks(sortedTasks(r.run.stopping)), r.run.restartDue,
		joinTasks(sortedTasks(r.run.readying)), r.run.waiting, s.tasks.writing, s.tasks.latest)
}

func sortedTasks[V any](m map[task.ID]V) []task.ID {
	ts := make([]task.ID, 0, len(m))
	for t := range m {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, compareTasks)
	return ts
}

// RunCounts returns, for a region, how many stopped tasks have not ended,
// how many respawned tasks have not reported ready, and whether its restart
// is due (for dumps).
func (s *Supervisor) RunCounts(region int) (stopping, readying int, restartDue bool) {
	r, ok := s.byID[region]
	if !ok {
		return 0, 0, false
	}
	return len(r.run.stopping), len(r.run.readying), r.run.restartDue
}

// ErrNotAtBoundary is returned by Rebuild while a region is stopped or being
// restored: the regions may change only while every one of them runs.
var ErrNotAtBoundary = errors.New("supervision: not at a restart boundary")

// Rebuild replaces the job's regions (a new plan: restore at another
// parallelism, a rescale). It is valid only while every region runs (no
// restart under way; the caller also holds it to a checkpoint boundary): it
// returns ErrNotAtBoundary otherwise, and an error wrapping
// ErrInvalidConfig for regions New would refuse, changing nothing. The new
// regions start running with fresh restart intensities; the job's intensity
// and the latest checkpoint are kept. Tasks that stay keep their running
// incarnation; tasks no longer in any region are forgotten (the caller
// stops them), new ones run once OnTaskStarted reports them.
func (s *Supervisor) Rebuild(regions []Region) error {
	if s.failed {
		return fmt.Errorf("rebuild regions: job already failed: %w", ErrNotAtBoundary)
	}
	for _, r := range s.regions {
		if r.state != Running {
			return fmt.Errorf("rebuild regions: region %d is %v: %w", r.ID, r.state, ErrNotAtBoundary)
		}
	}
	cfg := s.cfg
	cfg.Regions = regions
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("rebuild regions: %w", err)
	}
	oldLive, oldLost := map[taskKey]int{}, map[taskKey]bool{}
	for t, gen := range s.tasks.live {
		oldLive[keyOf(t)] = gen
	}
	for t := range s.tasks.lost {
		oldLost[keyOf(t)] = true
	}
	s.cfg.Regions = regions
	s.regions, s.byID, s.byTask = nil, make(map[int]*region, len(regions)), map[taskKey]*region{}
	s.tasks.live, s.tasks.lost = map[task.ID]int{}, map[task.ID]bool{}
	for _, cr := range regions {
		r := &region{Region: Region{ID: cr.ID, Tasks: slices.Clone(cr.Tasks)}, tracker: s.newRegionTracker()}
		s.regions = append(s.regions, r)
		s.byID[r.ID] = r
		for _, t := range r.Tasks {
			s.byTask[keyOf(t)] = r
			if gen, ok := oldLive[keyOf(t)]; ok {
				s.tasks.live[t] = gen
			}
			if oldLost[keyOf(t)] {
				s.tasks.lost[t] = true
			}
		}
	}
	return nil
}

// compareTasks orders tasks by operator id, then instance.
func compareTasks(a, b task.ID) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}
