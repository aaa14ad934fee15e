package mailbox

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// Priority marks a message type for the priority lane. Barriers and control
// messages implement it; data buffers do not.
type Priority interface {
	WeirPriority()
}

// Stats are lane-length counters for tests and metrics. Current lengths are
// summed over every mailbox that shares the Stats; the maxima are the longest
// lane any one of those mailboxes has had.
type Stats struct {
	NormalLen   atomic.Int64 // messages queued in normal lanes now
	NormalMax   atomic.Int64 // longest normal lane observed
	PriorityLen atomic.Int64 // messages queued in priority lanes now
	PriorityMax atomic.Int64 // longest priority lane observed
}

// observe records a lane that has just grown to n messages.
func observe(cur, maxSeen *atomic.Int64, n int) {
	cur.Add(1)
	for {
		m := maxSeen.Load()
		if int64(n) <= m || maxSeen.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// Option configures the mailboxes made by New.
type Option func(*config)

type config struct {
	stats       *Stats
	middlewares []actor.MailboxMiddleware
	capacity    int
	probe       *Probe
	inOrder     bool
}

// InOrder makes the mailboxes deliver every user message in the order posted,
// Priority or not: for actors that forward what they receive, such as the
// stand-ins of remote actors, where a barrier must not overtake the data
// sent before it on the way to the channel that records what it overtakes.
func InOrder() Option {
	return func(c *config) { c.inOrder = true }
}

// WithStats makes the mailboxes keep lane lengths in s.
func WithStats(s *Stats) Option {
	return func(c *config) { c.stats = s }
}

// WithMiddlewares adds protoactor mailbox middlewares, called as the default
// mailbox calls them.
func WithMiddlewares(m ...actor.MailboxMiddleware) Option {
	return func(c *config) { c.middlewares = append(c.middlewares, m...) }
}

// WithInitialCapacity sets how many messages each lane holds before it first
// grows (default 16).
func WithInitialCapacity(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.capacity = n
		}
	}
}
