package weir

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/keygroups"
)

// JoinFunc gets, for one key and one window, every record of each side that
// fell into it (in arrival order).
type JoinFunc[A, B any, K keygroups.Key, Out any] func(key K, start, end time.Time, as []A, bs []B, out *Emitter[Out]) error

// WindowJoin joins two keyed streams in event-time tumbling or sliding
// windows: when the watermark passes a window's end, fn runs for each key
// with records on both sides of that window. Both streams need timestamps.
// The records wait in keyed state (exactly once across failures, moved with
// their key groups); a record whose windows have all ended is dropped.
func WindowJoin[A, B any, K keygroups.Key, Out any](cs ConnectedStreams[A, B, K], spec WindowSpec, name string, fn JoinFunc[A, B, K, Out], opts ...OpOption) Stream[Out] {
	g := cs.a.s.g
	bad := func(err error) { g.errs = append(g.errs, fmt.Errorf("operator %q: %w", name, err)) }
	if err := spec.validate(); err != nil {
		bad(err)
	}
	if spec.kind == sessionWindows || spec.processingTime {
		bad(errors.New("a window join takes event-time tumbling or sliding windows"))
	}
	if cs.a.s.eventTime == nil || cs.b.s.eventTime == nil {
		bad(errors.New("a window join needs timestamps on both inputs (weir.WithTimestamps upstream)"))
	}
	if fn == nil {
		bad(errors.New("no join function"))
	}
	left := NewMapState[int64, []A](cs.a.s.g, "weir.join.left")
	right := NewMapState[int64, []B](cs.a.s.g, "weir.join.right")
	return CoProcess(cs, name, CoFunctions[A, B, K, Out]{
		OnA: func(ctx *KeyedContext[K], a A, _ *Emitter[Out]) error {
			joinAdd(ctx, spec, func(start int64) {
				l, _ := left.Get(ctx, start)
				left.Put(ctx, start, append(l, a))
			})
			return nil
		},
		OnB: func(ctx *KeyedContext[K], b B, _ *Emitter[Out]) error {
			joinAdd(ctx, spec, func(start int64) {
				r, _ := right.Get(ctx, start)
				right.Put(ctx, start, append(r, b))
			})
			return nil
		},
		OnTimer: func(ctx *KeyedContext[K], t Timer, out *Emitter[Out]) error {
			at := t.At.UnixNano()
			var due []int64
			collect := func(start int64) bool {
				if start+spec.size-1 <= at && !slices.Contains(due, start) {
					due = append(due, start)
				}
				return true
			}
			left.Range(ctx, func(start int64, _ []A) bool { return collect(start) })
			right.Range(ctx, func(start int64, _ []B) bool { return collect(start) })
			slices.Sort(due)
			for _, start := range due {
				l, _ := left.Get(ctx, start)
				r, _ := right.Get(ctx, start)
				left.Delete(ctx, start)
				right.Delete(ctx, start)
				if len(l) > 0 && len(r) > 0 {
					if err := fn(ctx.Key(), time.Unix(0, start).UTC(), time.Unix(0, start+spec.size).UTC(), l, r, out); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}, append(opts, WithState(left, right))...)
}

// joinAdd puts the current record into each of its windows that has not
// ended (add(start)) and sets the timer that closes it.
func joinAdd[K keygroups.Key](ctx *KeyedContext[K], spec WindowSpec, add func(start int64)) {
	wm := ctx.watermark()
	for _, win := range spec.assign(nil, ctx.et.ts) {
		if win.maxTimestamp() <= wm {
			continue // ended: the record is late for this window
		}
		add(win.start)
		ctx.Timers().RegisterEventTime(time.Unix(0, win.maxTimestamp()))
	}
}
