package ratelimit

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Default rate of a repeated warning: a few lines per key every ten seconds.
const (
	DefaultPeriod = 10 * time.Second
	DefaultBurst  = 5
)

// Log rate-limits log events per key with a Limiter; safe for concurrent
// use. The zero value uses DefaultPeriod and DefaultBurst.
type Log struct {
	mu  sync.Mutex
	lim *Limiter
}

// Event returns ev to be sent when key may log at now, with the field
// suppressed (how many events of key were left out since the last one)
// when any were; otherwise it discards ev and returns nil, on which
// zerolog's methods do nothing.
func (l *Log) Event(ev *zerolog.Event, key string, now time.Time) *zerolog.Event {
	l.mu.Lock()
	if l.lim == nil {
		l.lim = New(DefaultPeriod, DefaultBurst)
	}
	ok, n := l.lim.Allow(key, now)
	l.mu.Unlock()
	if !ok {
		ev.Discard()
		return nil
	}
	if n > 0 {
		ev = ev.Int("suppressed", n)
	}
	return ev
}
