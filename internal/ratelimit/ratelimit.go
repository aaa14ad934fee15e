// Package ratelimit thins out repeated log lines: a pure limiter with
// logical time (the caller passes now), so a flood of the same warning (bad
// input on the wire) costs a few lines and a count of what was left out.
package ratelimit

import "time"

// Limiter lets at most Burst events per key through in each Period that
// starts with the first event let through; the others are suppressed and
// counted, and the count is handed back with the next event let through.
// Not safe for concurrent use; the zero value lets everything through.
type Limiter struct {
	Period time.Duration
	Burst  int
	keys   map[string]*window
}

// window is one key's current period.
type window struct {
	start      time.Time
	allowed    int
	suppressed int
}

// New returns a limiter of burst events per key per period.
func New(period time.Duration, burst int) *Limiter {
	return &Limiter{Period: period, Burst: burst}
}

// Allow reports whether an event of key at now may be logged and, when it
// may, how many events of key were suppressed since the last one let
// through. Time must not go backwards per key (an earlier now counts in the
// current period).
func (l *Limiter) Allow(key string, now time.Time) (ok bool, suppressed int) {
	if l.Period <= 0 || l.Burst <= 0 {
		return true, 0
	}
	if l.keys == nil {
		l.keys = map[string]*window{}
	}
	w := l.keys[key]
	if w == nil || now.Sub(w.start) >= l.Period {
		if w == nil {
			w = &window{}
			l.keys[key] = w
		}
		suppressed = w.suppressed
		*w = window{start: now, allowed: 1}
		return true, suppressed
	}
	if w.allowed < l.Burst {
		w.allowed++
		suppressed, w.suppressed = w.suppressed, 0
		return true, suppressed
	}
	w.suppressed++
	return false, 0
}

// Pending is how many events of key were suppressed and not yet reported.
func (l *Limiter) Pending(key string) int {
	if w := l.keys[key]; w != nil {
		return w.suppressed
	}
	return 0
}
