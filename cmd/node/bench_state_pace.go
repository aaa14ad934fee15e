package main

import "time"

// statePacer schedules the paced runs of `node bench state`: record i is
// due i/rate seconds after the record the schedule is anchored at. It takes
// the time as an argument and never sleeps itself.
type statePacer struct {
	rate     float64 // records/s
	start    time.Time
	from     int64
	anchored bool
}

// due returns when record i is due. The first call, and the first after
// reanchor, anchors the schedule at record i and now: what the source fell
// behind before is not owed.
func (p *statePacer) due(i int64, now time.Time) time.Time {
	if !p.anchored {
		p.start, p.from, p.anchored = now, i, true
	}
	return p.start.Add(time.Duration(float64(i-p.from) / p.rate * float64(time.Second)))
}

// reanchor makes the next due start a new schedule.
func (p *statePacer) reanchor() { p.anchored = false }

// latencyStart is when a record's latency counts from: when it was due,
// if the source made it late (held up by the job, the time it waited
// counts), else when it was made.
func latencyStart(due, made time.Time) time.Time {
	if due.Before(made) {
		return due
	}
	return made
}
