package transport

import (
	"errors"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// Counters counts transport trouble on a node; `node status` shows them.
// Safe for concurrent use; the zero value is ready to use.
type Counters struct {
	Malformed    atomic.Uint64 // messages FromMsg rejected, other than unknown type
	UnknownType  atomic.Uint64 // messages with an unknown Weir-Type
	BadSeq       atomic.Uint64 // messages SeqChecker did not find InOrder (the runtime counts them)
	SlowConsumer atomic.Uint64 // slow-consumer events (messages dropped by the client)
	// Links counts messages and bytes per link between nodes (not in
	// Snapshot: see LinkCounters.Snapshot).
	Links LinkCounters
}

// CounterValues is a snapshot of Counters.
type CounterValues struct {
	Malformed    uint64 `json:"malformed"`
	UnknownType  uint64 `json:"unknown_type"`
	BadSeq       uint64 `json:"bad_seq"`
	SlowConsumer uint64 `json:"slow_consumer"`
}

// Snapshot reads all counters (each atomically, not all at one instant).
func (c *Counters) Snapshot() CounterValues {
	return CounterValues{
		Malformed:    c.Malformed.Load(),
		UnknownType:  c.UnknownType.Load(),
		BadSeq:       c.BadSeq.Load(),
		SlowConsumer: c.SlowConsumer.Load(),
	}
}

// CountBad counts a FromMsg error: UnknownType for ErrUnknownType, else
// Malformed. Its signature fits Subscribe's bad callback; wrap it to log.
func (c *Counters) CountBad(_ string, err error) {
	if errors.Is(err, ErrUnknownType) {
		c.UnknownType.Add(1)
	} else {
		c.Malformed.Add(1)
	}
}

// SlowConsumerHandler returns an ErrHandler for nats.ErrorHandler that
// counts nats.ErrSlowConsumer in c and calls onSlow (if not nil) with the
// subscription that dropped messages, so the runtime can turn the loss into
// a recovery. nats.go reports a subscription once until it catches up, and
// calls the handler on its callback goroutine, so onSlow must not block.
// Other errors are ignored here: to log them, call this handler from your
// own ErrHandler.
func SlowConsumerHandler(c *Counters, onSlow func(sub *nats.Subscription)) nats.ErrHandler {
	return func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if !errors.Is(err, nats.ErrSlowConsumer) {
			return
		}
		c.SlowConsumer.Add(1)
		if onSlow != nil && sub != nil {
			onSlow(sub)
		}
	}
}
