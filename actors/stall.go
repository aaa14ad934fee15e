package actors

import (
	"context"
	"sync"
	"time"
)

// StallDumpAfter is how long a job may make no progress (no record read or
// written, no checkpoint completed, no region restarted) while work waits
// somewhere (JobDump.Busy) before it logs a dump of its actors; it logs
// again after each further StallDumpAfter without progress.
const StallDumpAfter = 30 * time.Second

// dumpWait bounds how long a dump waits for the actors' answers.
const dumpWait = 5 * time.Second

// progressMark is what a job's progress is measured by.
type progressMark struct {
	in, out            int64
	checkpoints        int
	restarts, failures int
}

// progress reads the job's progress counters.
func (j *Job) progress() progressMark {
	j.ckptLog.mu.Lock()
	n := len(j.ckptLog.stats)
	j.ckptLog.mu.Unlock()
	sv := j.Supervision()
	return progressMark{in: j.Metrics.RecordsIn.Load(), out: j.Metrics.RecordsOut.Load(), checkpoints: n,
		restarts: sv.Restarts, failures: sv.Failures}
}

// stallDetector decides when a job that makes no progress is reported: after
// `after` without a change of its progress mark, then again after each
// further `after`. It is pure: marks and logical time in, decisions out.
type stallDetector struct {
	after      time.Duration
	last       progressMark
	since      time.Duration // when last changed
	lastReport time.Duration // when last reported, if reported
	reported   bool          // reported since the last progress
}

func newStallDetector(after time.Duration, mark progressMark, now time.Duration) *stallDetector {
	return &stallDetector{after: after, last: mark, since: now}
}

// observe takes the mark at logical time now and says whether to report a
// stall, and for how long the job has made no progress.
func (s *stallDetector) observe(mark progressMark, now time.Duration) (report bool, stalled time.Duration) {
	if mark != s.last {
		s.last, s.since, s.reported = mark, now, false
		return false, 0
	}
	stalled = now - s.since
	if stalled < s.after || (s.reported && now-s.lastReport < s.after) {
		return false, stalled
	}
	s.lastReport, s.reported = now, true
	return true, stalled
}

// watchStalls runs until the job is done or its node shuts down, checking
// its progress every after/6 and logging a dump when it has made none for
// after while busy.
func (j *Job) watchStalls(after time.Duration) {
	defer j.untrack()
	tk := time.NewTicker(after / 6)
	defer tk.Stop()
	det := newStallDetector(after, j.progress(), j.now())
	for {
		select {
		case <-j.done:
			return
		case <-j.node.quit:
			return
		case <-tk.C:
			if report, stalled := det.observe(j.progress(), j.now()); report {
				j.logStall(stalled)
			}
		}
	}
}

// logStall takes a dump and logs it if the job is busy.
func (j *Job) logStall(stalled time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), dumpWait)
	defer cancel()
	go func() { // a job that ends meanwhile ends the dump
		select {
		case <-j.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	d, err := j.Dump(ctx)
	if err != nil {
		j.log.Warn().Err(err).Dur("stalled_for", stalled).Msg("job makes no progress; no dump")
		return
	}
	if !d.Busy() {
		return
	}
	j.log.Warn().Dur("stalled_for", stalled).Interface("dump", d).Msg("job makes no progress: state of its actors")
}

// liveJobs are the jobs submitted in this process and not yet done, for
// DumpJobs.
var liveJobs struct {
	mu   sync.Mutex
	jobs map[*Job]struct{}
}

// track lists j in liveJobs until it is done.
func (j *Job) track() {
	liveJobs.mu.Lock()
	defer liveJobs.mu.Unlock()
	if liveJobs.jobs == nil {
		liveJobs.jobs = map[*Job]struct{}{}
	}
	liveJobs.jobs[j] = struct{}{}
}

func (j *Job) untrack() {
	liveJobs.mu.Lock()
	defer liveJobs.mu.Unlock()
	delete(liveJobs.jobs, j)
}

// DumpJobs dumps every job this process coordinates that is not done yet
// (what `node run` prints on SIGUSR1).
func DumpJobs(ctx context.Context) []*JobDump {
	liveJobs.mu.Lock()
	jobs := make([]*Job, 0, len(liveJobs.jobs))
	for j := range liveJobs.jobs {
		jobs = append(jobs, j)
	}
	liveJobs.mu.Unlock()
	var out []*JobDump
	for _, j := range jobs {
		if d, err := j.Dump(ctx); err == nil {
			out = append(out, d)
		}
	}
	return out
}
