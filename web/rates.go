package web

import "time"

// backpressureWindow is how many polls a task's backpressure ratio spans.
const backpressureWindow = 10

// minRateInterval is the shortest interval a rate is computed over: polls
// closer together than this (the job list and a job's detail read in one
// page refresh) get the last rate again.
const minRateInterval = 400 * time.Millisecond

// counterSample is a counter's value at one poll and the rate computed then.
type counterSample struct {
	value int64
	at    time.Time
	rate  float64
}

// Rates turns counters read at each poll into per-second rates, and
// backpressure samples into ratios over the last polls. It keeps one sample
// per counter; time is passed in. Not safe for concurrent use.
type Rates struct {
	last    map[string]counterSample
	blocked map[string][]bool
}

// NewRates returns an empty Rates.
func NewRates() *Rates {
	return &Rates{last: map[string]counterSample{}, blocked: map[string][]bool{}}
}

// Rate records counter key's value at time at and returns its rate per
// second since the previous sample: 0 on the first sample. Within
// minRateInterval of the previous sample it returns the previous rate and
// keeps that sample. A value below the previous one means the counter
// started again (a restarted task): the rate counts from 0 over the
// interval.
func (r *Rates) Rate(key string, value int64, at time.Time) float64 {
	prev, ok := r.last[key]
	if !ok {
		r.last[key] = counterSample{value: value, at: at}
		return 0
	}
	dt := at.Sub(prev.at)
	if dt < minRateInterval {
		return prev.rate
	}
	delta := value - prev.value
	if delta < 0 {
		delta = value
	}
	rate := float64(delta) / dt.Seconds()
	r.last[key] = counterSample{value: value, at: at, rate: rate}
	return rate
}

// Backpressure records whether task key was blocked on credit at this poll
// and returns the share of the last polls (up to backpressureWindow) in
// which it was: 0 never, 1 always.
func (r *Rates) Backpressure(key string, blocked bool) float64 {
	w := append(r.blocked[key], blocked)
	if len(w) > backpressureWindow {
		w = w[len(w)-backpressureWindow:]
	}
	r.blocked[key] = w
	n := 0
	for _, b := range w {
		if b {
			n++
		}
	}
	return float64(n) / float64(len(w))
}

// Forget drops the samples of keys not in keep, so a finished job's tasks do
// not pile up.
func (r *Rates) Forget(keep map[string]bool) {
	for k := range r.last {
		if !keep[k] {
			delete(r.last, k)
		}
	}
	for k := range r.blocked {
		if !keep[k] {
			delete(r.blocked, k)
		}
	}
}
