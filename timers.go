package weir

import (
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/state"
)

// timersTable is the name of the internal state that holds an operator's
// timers and watermark per key group.
const timersTable = "weir.timers"

// eventScope is the event-time side of a keyed operator with timers: shared
// by its contexts (both inputs of a connected operator).
type eventScope struct {
	table *state.TimerTable
	wm    int64 // the operator's input watermark
	ts    int64 // the current record's or timer's time; MinWatermark if none
	now   func() time.Time
	// moved holds the key groups a live rescale moved here that are not
	// released yet, with the watermark of the instance they came from.
	moved map[int]int64
}

// Timers registers and deletes the current key's timers.
type Timers struct {
	scope *eventScope
	core  *keyedCore
}

// Timers returns the current key's timer service (keyed operators made with
// ProcessWithTimers, ConnectedKeyed or a window).
func (c *KeyedContext[K]) Timers() Timers {
	if c.et == nil {
		panic("weir: Timers() in an operator without timers: use weir.ProcessWithTimers")
	}
	return Timers{scope: c.et, core: &c.core}
}

func (t Timers) timer(at int64, d state.TimeDomain) state.Timer {
	return state.Timer{At: at, Domain: d, Group: t.core.group, Key: t.core.key}
}

// RegisterEventTime sets a timer for the current key that fires once the
// watermark reaches at. Registering the same time twice gives one timer.
func (t Timers) RegisterEventTime(at time.Time) {
	t.scope.table.Register(t.timer(at.UnixNano(), state.EventTime))
}

// DeleteEventTime removes the current key's event-time timer at at.
func (t Timers) DeleteEventTime(at time.Time) {
	t.scope.table.Delete(t.timer(at.UnixNano(), state.EventTime))
}

// RegisterProcessingTime sets a timer for the current key that fires once
// the wall clock reaches at (checked every flush interval).
func (t Timers) RegisterProcessingTime(at time.Time) {
	t.scope.table.Register(t.timer(at.UnixNano(), state.ProcessingTime))
}

// DeleteProcessingTime removes the current key's processing-time timer at at.
func (t Timers) DeleteProcessingTime(at time.Time) {
	t.scope.table.Delete(t.timer(at.UnixNano(), state.ProcessingTime))
}

// CurrentProcessingTime is the wall clock as the operator sees it.
func (t Timers) CurrentProcessingTime() time.Time { return t.scope.now() }

// Timestamp is the event time of the record being processed (of the timer
// in OnTimer); the zero time when the stream has no event time.
func (c *KeyedContext[K]) Timestamp() time.Time {
	if c.et == nil || c.et.ts == plan.MinWatermark {
		return time.Time{}
	}
	return time.Unix(0, c.et.ts)
}

// Watermark is the operator's current watermark for the current key: no
// record at or before it is expected. The zero time before any watermark.
func (c *KeyedContext[K]) Watermark() time.Time {
	w := c.watermark()
	if w == plan.MinWatermark {
		return time.Time{}
	}
	return time.Unix(0, w)
}

// watermark is the current key group's watermark in Unix nanoseconds: the
// operator's, or the one its key group was restored with if that is later.
func (c *KeyedContext[K]) watermark() int64 {
	if c.et == nil {
		return plan.MinWatermark
	}
	if w, ok := c.et.moved[c.core.group]; ok {
		return w // moved here by a live rescale, not released yet
	}
	return max(c.et.wm, c.et.table.Floor(c.core.group))
}

// Timer is a timer that fired.
type Timer struct {
	// At is the time the timer was set for.
	At time.Time
	// ProcessingTime is true for a processing-time timer.
	ProcessingTime bool
}

// TimerFunc runs when one of a key's timers fires, with that key in scope.
type TimerFunc[K keygroups.Key, Out any] func(ctx *KeyedContext[K], t Timer, out *Emitter[Out]) error
