package weir

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// WindowedStream is a keyed stream cut into windows; aggregate it with
// Aggregate or Reduce.
type WindowedStream[T any, K keygroups.Key] struct {
	ks       KeyedStream[T, K]
	spec     WindowSpec
	lateness int64
	late     *LateRecords[T]
}

// Window cuts a keyed stream into windows of spec. In event time the stream
// needs timestamps (WithTimestamps or Timestamped upstream).
func Window[T any, K keygroups.Key](ks KeyedStream[T, K], spec WindowSpec) WindowedStream[T, K] {
	return WindowedStream[T, K]{ks: ks, spec: spec, late: &LateRecords[T]{}}
}

// AllowedLateness keeps a window's state for d after the watermark passed
// its end: a record that arrives in that time still counts, and the window
// fires again with the updated result. Records later than that are late.
func (w WindowedStream[T, K]) AllowedLateness(d time.Duration) WindowedStream[T, K] {
	w.lateness = int64(d)
	return w
}

// SideOutputLate sends late records to a stream of their own (Late) instead
// of dropping them.
func (w WindowedStream[T, K]) SideOutputLate() WindowedStream[T, K] {
	w.late.side = true
	return w
}

// Late is what became of the late records: how many were dropped and, after
// SideOutputLate, their stream.
func (w WindowedStream[T, K]) Late() *LateRecords[T] { return w.late }

// LateRecords counts a window operator's late records and, with
// SideOutputLate, carries them as a stream.
type LateRecords[T any] struct {
	side    bool
	dropped atomic.Int64
	stream  *Stream[T]
}

// Dropped is the number of late records dropped in this process (a record
// replayed after a failure counts again).
func (l *LateRecords[T]) Dropped() int64 { return l.dropped.Load() }

// Stream is the late records' stream (SideOutputLate; after Aggregate or
// Reduce made the operator). Its second return is false before that.
func (l *LateRecords[T]) Stream() (Stream[T], bool) {
	if l.stream == nil {
		return Stream[T]{}, false
	}
	return *l.stream, true
}

// WindowResult is one window's output for one key.
type WindowResult[K keygroups.Key, R any] struct {
	Key   K         `json:"key" msgpack:"key"`
	Start time.Time `json:"start" msgpack:"start"`
	End   time.Time `json:"end" msgpack:"end"`
	Value R         `json:"value" msgpack:"value"`
}

// Reduce aggregates each window with fn, which combines two records into one.
func Reduce[T any, K keygroups.Key](w WindowedStream[T, K], name string, fn func(a, b T) T, opts ...OpOption) Stream[WindowResult[K, T]] {
	return Aggregate(w, name, reducer(fn), opts...)
}

// windowEntry is one window of one key in state.
type windowEntry[Acc any] struct {
	End   int64 `msgpack:"end"`
	Acc   Acc   `msgpack:"acc"`
	Fired bool  `msgpack:"fired"`
}

// Aggregate folds each window of each key with agg and emits one result per
// window when the watermark passes its end (the wall clock, in processing
// time), then again for each record that arrives within the allowed
// lateness. The results carry the window's last instant as their event time.
// Window state and timers are keyed state: exactly once across failures,
// moved with their key groups on a restore at another parallelism.
func Aggregate[T any, K keygroups.Key, Acc, R any](w WindowedStream[T, K], name string, agg Aggregator[T, Acc, R], opts ...OpOption) Stream[WindowResult[K, R]] {
	g := w.ks.s.g
	bad := func(err error) { g.errs = append(g.errs, fmt.Errorf("operator %q: %w", name, err)) }
	if err := w.spec.validate(); err != nil {
		bad(err)
	}
	if agg.Init == nil || agg.Add == nil || agg.Result == nil {
		bad(errors.New("the aggregator needs Init, Add and Result"))
	}
	if w.spec.kind == sessionWindows && agg.Merge == nil {
		bad(errors.New("session windows merge: the aggregator needs Merge"))
	}
	if !w.spec.processingTime && w.ks.s.eventTime == nil {
		bad(errors.New("event-time windows on a stream without timestamps: add weir.WithTimestamps upstream (or weir.Timestamped), or use InProcessingTime"))
	}
	if w.lateness < 0 {
		bad(fmt.Errorf("allowed lateness %v must not be negative", time.Duration(w.lateness)))
	}
	lateness := w.lateness
	if w.spec.processingTime {
		lateness = 0
	}
	windows := NewMapState[int64, windowEntry[Acc]](w.ks.s.g, "weir.windows")
	var lateOut *Stream[T]
	if w.late.side {
		lateOut = new(Stream[T])
		w.late.stream = lateOut
	}
	out := processTimed(w.ks, name, func(ti *timedInstance[K, WindowResult[K, R]]) KeyedFunctions[T, K, WindowResult[K, R]] {
		op := &windowOperator[T, K, Acc, R]{spec: w.spec, lateness: lateness, agg: agg, late: w.late, windows: windows}
		if lateOut != nil {
			op.lateOut = &lateEmitter[T]{}
			ti.bindExtra = op.lateOut.bind
		}
		return KeyedFunctions[T, K, WindowResult[K, R]]{OnRecord: op.onRecord, OnTimer: op.onTimer}
	}, append(opts, WithState(windows))...)
	out.eventTime = func(r WindowResult[K, R]) int64 { return r.End.UnixNano() - 1 }
	if lateOut != nil {
		*lateOut = lateStream[T](g, g.job.Operators[len(g.job.Operators)-1])
	}
	return out
}

// windowOperator is the logic of a window operator, run by a keyed operator
// with timers.
type windowOperator[T any, K keygroups.Key, Acc, R any] struct {
	spec     WindowSpec
	lateness int64
	agg      Aggregator[T, Acc, R]
	late     *LateRecords[T]
	lateOut  *lateEmitter[T]
	windows  *MapState[int64, windowEntry[Acc]]
	scratch  []window
}

// now is the record's time: its event time, or the wall clock.
func (o *windowOperator[T, K, Acc, R]) now(ctx *KeyedContext[K]) int64 {
	if o.spec.processingTime {
		return ctx.et.now().UnixNano()
	}
	return ctx.et.ts
}

// onRecord adds a record to its windows; one whose windows have all expired
// is late.
func (o *windowOperator[T, K, Acc, R]) onRecord(ctx *KeyedContext[K], rec T, out *Emitter[WindowResult[K, R]]) error {
	ts := o.now(ctx)
	wm := ctx.watermark()
	if o.spec.processingTime {
		wm = plan.MinWatermark
	}
	wins := o.spec.assign(o.scratch[:0], ts)
	o.scratch = wins
	added := false
	for _, win := range wins {
		if win.maxTimestamp()+o.lateness <= wm {
			continue // expired: its state is gone
		}
		added = true
		if o.spec.kind == sessionWindows {
			win = o.mergeSessions(ctx, win)
		}
		e, ok := o.windows.Get(ctx, win.start)
		if !ok {
			e = windowEntry[Acc]{End: win.end, Acc: o.agg.Init()}
		}
		e.Acc = o.agg.Add(e.Acc, rec)
		if win.maxTimestamp() <= wm { // late, within the allowed lateness: fire again now
			e.Fired = true
			o.emit(ctx, win, e.Acc, out)
		} else {
			o.windowTimers(ctx, win, true)
		}
		o.windows.Put(ctx, win.start, e)
	}
	if !added {
		o.onLate(rec)
	}
	return nil
}

// windowTimers sets (or, for a session merged into another, deletes) the
// timer that fires win and, with allowed lateness, the one that clears it.
func (o *windowOperator[T, K, Acc, R]) windowTimers(ctx *KeyedContext[K], win window, set bool) {
	t := ctx.Timers()
	event, processing := t.RegisterEventTime, t.RegisterProcessingTime
	if !set {
		event, processing = t.DeleteEventTime, t.DeleteProcessingTime
	}
	at := time.Unix(0, win.maxTimestamp())
	if o.spec.processingTime {
		processing(at)
		return
	}
	event(at)
	if o.lateness > 0 {
		event(at.Add(time.Duration(o.lateness)))
	}
}

// mergeSessions merges the key's sessions that overlap win into one
// window, which it returns; its state holds the merged accumulator.
func (o *windowOperator[T, K, Acc, R]) mergeSessions(ctx *KeyedContext[K], win window) window {
	var overlap []int64
	o.windows.Range(ctx, func(start int64, e windowEntry[Acc]) bool {
		if start < win.end && win.start < e.End {
			overlap = append(overlap, start)
		}
		return true
	})
	if len(overlap) == 0 {
		return win
	}
	slices.Sort(overlap)
	merged := win
	var acc Acc
	fired, have := false, false
	for _, start := range overlap {
		e, _ := o.windows.Get(ctx, start)
		merged.start, merged.end = min(merged.start, start), max(merged.end, e.End)
		if have {
			acc = o.agg.Merge(acc, e.Acc)
		} else {
			acc, have = e.Acc, true
		}
		fired = fired || e.Fired
		o.windowTimers(ctx, window{start, e.End}, false)
		o.windows.Delete(ctx, start)
	}
	o.windows.Put(ctx, merged.start, windowEntry[Acc]{End: merged.end, Acc: acc, Fired: fired})
	return merged
}

// onTimer fires the key's windows that are due and clears those past their
// allowed lateness, earliest first.
func (o *windowOperator[T, K, Acc, R]) onTimer(ctx *KeyedContext[K], t Timer, out *Emitter[WindowResult[K, R]]) error {
	at := t.At.UnixNano()
	var due []int64
	o.windows.Range(ctx, func(start int64, e windowEntry[Acc]) bool {
		if e.End-1 <= at {
			due = append(due, start)
		}
		return true
	})
	slices.Sort(due)
	for _, start := range due {
		e, _ := o.windows.Get(ctx, start)
		win := window{start, e.End}
		if !e.Fired {
			o.emit(ctx, win, e.Acc, out)
			e.Fired = true
		}
		if win.maxTimestamp()+o.lateness <= at {
			o.windows.Delete(ctx, start)
			continue
		}
		o.windows.Put(ctx, start, e)
	}
	return nil
}

func (o *windowOperator[T, K, Acc, R]) emit(ctx *KeyedContext[K], win window, acc Acc, out *Emitter[WindowResult[K, R]]) {
	out.Emit(WindowResult[K, R]{Key: ctx.Key(), Start: time.Unix(0, win.start).UTC(), End: time.Unix(0, win.end).UTC(),
		Value: o.agg.Result(acc)})
}

// onLate drops a late record (counted) or sends it to the late stream.
func (o *windowOperator[T, K, Acc, R]) onLate(rec T) {
	if o.lateOut != nil {
		o.lateOut.emit(rec)
		return
	}
	o.late.dropped.Add(1)
}
