package supervision

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// RegionState is where a region is in its restart cycle.
type RegionState int

const (
	// Running: the region's tasks run; a failure stops it.
	Running RegionState = iota
	// Stopped: the region was stopped and waits for its backoff delay.
	Stopped
	// Restoring: RestartRegion was issued; waiting for OnRegionRestarted or
	// OnRestoreFailed.
	Restoring
)

// String names the state for logs and scripted tests.
func (s RegionState) String() string {
	switch s {
	case Running:
		return "running"
	case Stopped:
		return "stopped"
	case Restoring:
		return "restoring"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// region is the supervisor's view of one region.
type region struct {
	Region
	state     RegionState
	tracker   *Tracker
	restartAt time.Duration // when Stopped
	attempt   int           // of the pending restart
	// The original failure that stopped the region (for FailJob).
	originTask  task.ID
	originCause string
	run         regionRun
}

// Supervisor decides the restarts of one job's regions: a failure stops its
// region at once and restarts it after the backoff delay, as long as the
// region's and the job's restart intensities allow. A region exceeding its
// own intensity escalates to the job, which restarts every region (counted
// by the job's intensity); the job exceeding its intensity fails the job.
// It is not safe for concurrent use; the job's supervising actor calls it
// from one goroutine.
type Supervisor struct {
	cfg     Config
	regions []*region // in Config order
	byID    map[int]*region
	byTask  map[taskKey]*region
	job     *Tracker
	failed  bool
	tasks   taskRun
}

// New returns a Supervisor with every region running, or an error wrapping
// ErrInvalidConfig.
func New(cfg Config) (*Supervisor, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new supervisor: %w", err)
	}
	job, err := NewTracker(cfg.jobIntensity())
	if err != nil {
		return nil, fmt.Errorf("new supervisor: %w", err)
	}
	s := &Supervisor{
		cfg:    cfg,
		byID:   make(map[int]*region, len(cfg.Regions)),
		byTask: map[taskKey]*region{},
		job:    job,
		tasks:  newTaskRun(cfg.Latest),
	}
	for _, cr := range cfg.Regions {
		r := &region{Region: Region{ID: cr.ID, Tasks: slices.Clone(cr.Tasks)}}
		r.tracker = s.newRegionTracker()
		s.regions = append(s.regions, r)
		s.byID[r.ID] = r
		for _, t := range r.Tasks {
			s.byTask[keyOf(t)] = r
		}
	}
	return s, nil
}

func (s *Supervisor) newRegionTracker() *Tracker {
	t, err := NewTracker(s.cfg.Intensity)
	if err != nil {
		panic(fmt.Sprintf("supervision: intensity validated in New: %v", err))
	}
	return t
}

// OnTaskFailed handles a task failure (user panic or error, actor stopped
// from outside, channel actor dying). In a running region it returns
// StopRegion and, if the job's intensity is exceeded, FailJob; the restart
// follows from Tick after the backoff delay. Reports from tasks of a region
// that is stopped or restoring are Ignored as consequences (a task failing
// while its region is restored must be reported with OnRestoreFailed).
func (s *Supervisor) OnTaskFailed(tk task.ID, cause string, now time.Duration) []Action {
	if s.failed {
		return []Action{Ignored{Reason: fmt.Sprintf("failure of %v: job already failed", tk)}}
	}
	r, ok := s.byTask[keyOf(tk)]
	if !ok {
		return []Action{Ignored{Reason: fmt.Sprintf("failure of %v: not a task of the job", tk)}}
	}
	if r.state != Running {
		return []Action{Ignored{Reason: fmt.Sprintf("failure of %v: region %d already %v", tk, r.ID, r.state)}}
	}
	canonical := r.Tasks[slices.IndexFunc(r.Tasks, func(t task.ID) bool { return keyOf(t) == keyOf(tk) })]
	r.originTask, r.originCause = canonical, cause
	return s.fail(r, fmt.Sprintf("task %v failed", canonical), now)
}

// OnRegionRestarted records that the actors restored the region and it runs
// again. It returns nothing, or Ignored if the region was not restoring.
func (s *Supervisor) OnRegionRestarted(region int, now time.Duration) []Action {
	if s.failed {
		return []Action{Ignored{Reason: fmt.Sprintf("region %d restarted: job already failed", region)}}
	}
	r, ok := s.byID[region]
	if !ok {
		return []Action{Ignored{Reason: fmt.Sprintf("region %d restarted: no such region", region)}}
	}
	if r.state != Restoring {
		return []Action{Ignored{Reason: fmt.Sprintf("region %d restarted: it is %v, not restoring", region, r.state)}}
	}
	r.state = Running
	s.stable(now)
	return nil
}

// OnRestoreFailed handles a failed restore of a restoring region (e.g. a
// corrupt checkpoint): it counts as a failure of the region, like
// OnTaskFailed, keeping the original failure for FailJob.
func (s *Supervisor) OnRestoreFailed(region int, cause string, now time.Duration) []Action {
	if s.failed {
		return []Action{Ignored{Reason: fmt.Sprintf("restore of region %d failed: job already failed", region)}}
	}
	r, ok := s.byID[region]
	if !ok {
		return []Action{Ignored{Reason: fmt.Sprintf("restore of region %d failed: no such region", region)}}
	}
	if r.state != Restoring {
		return []Action{Ignored{Reason: fmt.Sprintf("restore of region %d failed: it is %v, not restoring", region, r.state)}}
	}
	return s.fail(r, fmt.Sprintf("restore of region %d failed: %s", region, cause), now)
}

// Tick advances logical time: it returns RestartRegion for every stopped
// region whose backoff delay has passed (in Config order), and tells the
// intensity trackers which regions have kept running.
func (s *Supervisor) Tick(now time.Duration) []Action {
	if s.failed {
		return nil
	}
	var acts []Action
	for _, r := range s.regions {
		if r.state == Stopped && !r.run.restartDue && now >= r.restartAt {
			r.run.restartDue = true
			acts = append(acts, s.maybeRestart(r)...)
		}
	}
	s.stable(now)
	return acts
}

// State returns the state of a region.
func (s *Supervisor) State(region int) (RegionState, bool) {
	r, ok := s.byID[region]
	if !ok {
		return 0, false
	}
	return r.state, true
}

// Failed reports whether the job failed (FailJob was returned).
func (s *Supervisor) Failed() bool { return s.failed }

// NextRestart returns the earliest time at which Tick will restart a region,
// so the actor can arm a timer; false when no restart is pending.
func (s *Supervisor) NextRestart() (time.Duration, bool) {
	var at time.Duration
	found := false
	if s.failed {
		return 0, false
	}
	for _, r := range s.regions {
		if r.state == Stopped && !r.run.restartDue && (!found || r.restartAt < at) {
			at, found = r.restartAt, true
		}
	}
	return at, found
}

// OnProgress reports that a checkpoint completed: every running region (and
// the job, when all run) made durable progress since its last restart, so
// their backoff starts over. A region that fails again before any checkpoint
// completes keeps backing off longer each time.
func (s *Supervisor) OnProgress() {
	all := true
	for _, r := range s.regions {
		if r.state == Running {
			r.tracker.OnProgress()
		} else {
			all = false
		}
	}
	if all {
		s.job.OnProgress()
	}
}

// stable tells the trackers which subtrees run: each running region, and the
// job when all its regions run.
func (s *Supervisor) stable(now time.Duration) {
	all := true
	for _, r := range s.regions {
		if r.state == Running {
			r.tracker.OnStable(now)
		} else {
			all = false
		}
	}
	if all {
		s.job.OnStable(now)
	}
}

// fail handles a failure of running or restoring region r described by
// event; r.originTask and r.originCause hold the original failure.
func (s *Supervisor) fail(r *region, event string, now time.Duration) []Action {
	acts := []Action{s.stop(r, now)}
	rd := r.tracker.OnFailure(now)
	jd := s.job.OnFailure(now)
	ji := s.cfg.jobIntensity()
	switch {
	case jd.Escalate:
		s.failed = true
		reason := fmt.Sprintf("%s; job: more than %d restarts within %v", event, ji.MaxRestarts, ji.Window)
		if rd.Escalate {
			reason = fmt.Sprintf("%s; region %d: more than %d restarts within %v; job: more than %d restarts within %v",
				event, r.ID, s.cfg.Intensity.MaxRestarts, s.cfg.Intensity.Window, ji.MaxRestarts, ji.Window)
		}
		acts = append(acts, FailJob{Cause: r.originCause, Task: r.originTask, Reason: reason})
	case rd.Escalate:
		// The region escalates to the job, which restarts all its regions
		// with fresh region trackers (OTP restarts a child supervisor anew).
		for _, o := range s.regions {
			if o.state != Stopped {
				acts = append(acts, s.stop(o, now))
			}
			if o != r {
				o.originTask, o.originCause = r.originTask, r.originCause
			}
			o.state = Stopped
			o.run.restartDue = false
			o.restartAt = now + jd.Delay
			o.attempt = jd.Attempt
			o.tracker = s.newRegionTracker()
		}
	default:
		r.restartAt = now + rd.Delay
		r.attempt = rd.Attempt
	}
	return acts
}
