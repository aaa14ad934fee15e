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
	in, out           int64
	checkpoints       int
	restarts, failure int
}

func (j *Job) progress() progressMark {
	j.ckptLog.mu.Lock()
	n := len(j.ckptLog.stats)
	j.ckptLog.mu.Unlock()
	sv := j.Supervision()
	return progressMark{in: j.Metrics.RecordsIn.Load(), out: j.Metrics.RecordsOut.Load(), checkpoints: n,
		restarts: sv.Restarts, failure: sv.Failures}
}

// watchStalls runs until the job is done, checking its progress every
// after/6 and logging a dump when it has made none for after while busy.
func (j *Job) watchStalls(after time.Duration) {
	tk := time.NewTicker(after / 6)
	defer tk.Stop()
	last, since, logged := j.progress(), time.Now(), time.Time{}
	for {
		select {
		case <-j.done:
			j.untrack()
			return
		case <-j.node.quit:
			j.untrack()
			return
		case now := <-tk.C:
			if p := j.progress(); p != last {
				last, since, logged = p, now, time.Time{}
				continue
			}
			if now.Sub(since) < after || (!logged.IsZero() && now.Sub(logged) < after) {
				continue
			}
			logged = now
			j.logStall(now.Sub(since))
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
