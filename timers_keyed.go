package weir

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/state"
)

// KeyedFunctions are the callbacks of a keyed operator with timers.
type KeyedFunctions[T any, K keygroups.Key, Out any] struct {
	// OnRecord runs for every record with its key in scope (required).
	OnRecord ProcessFunc[T, K, Out]
	// OnTimer runs when a timer of a key fires, in time order.
	OnTimer TimerFunc[K, Out]
	// OnEnd runs once per instance when the input has ended, after every
	// event-time timer fired (the watermark reached its end).
	OnEnd func(out *Emitter[Out]) error
}

// ProcessWithTimers is Process with timers: fns.OnRecord may register
// event-time and processing-time timers through ctx.Timers(), and
// fns.OnTimer runs when they fire. Timers are keyed state: snapshotted per
// key group with the rest, they move with their key group on a restore at
// another parallelism, and a timer fires exactly once across failures (a
// fired timer is gone from the state of the next checkpoint). At the end of
// a bounded input the watermark reaches its end: every event-time timer
// fires, then fns.OnEnd.
func ProcessWithTimers[T any, K keygroups.Key, Out any](ks KeyedStream[T, K], name string, fns KeyedFunctions[T, K, Out], opts ...OpOption) Stream[Out] {
	if fns.OnRecord == nil {
		ks.s.g.errs = append(ks.s.g.errs, fmt.Errorf("operator %q: KeyedFunctions without OnRecord", name))
	}
	return processTimed(ks, name, func(*timedInstance[K, Out]) KeyedFunctions[T, K, Out] { return fns }, opts...)
}

// processTimed adds a keyed operator with timers whose functions newFns
// makes for each instance (operators built on it keep per-instance scratch).
func processTimed[T any, K keygroups.Key, Out any](ks KeyedStream[T, K], name string, newFns func(*timedInstance[K, Out]) KeyedFunctions[T, K, Out], opts ...OpOption) Stream[Out] {
	g := ks.s.g
	// Each instance gets its own record function below.
	placeholder := func(*KeyedContext[K], T, *Emitter[Out]) error { return nil }
	out := Process(ks, name, placeholder, append(opts, WithState(&timerState{newBinding(g, timersTable)}))...)
	op := g.job.Operators[len(g.job.Operators)-1]
	inner := op.New
	at := ks.s.eventTime
	op.New = func(instance int) (plan.Instance, error) {
		in, err := inner(instance)
		if err != nil {
			return nil, err
		}
		ki := in.(*keyedInstance[T, K, Out])
		ti := &timedInstance[K, Out]{keyed: ki, name: name}
		fns := newFns(ti)
		ti.onTimer, ti.onEnd = fns.OnTimer, fns.OnEnd
		onRecord := fns.OnRecord
		if onRecord == nil {
			onRecord = func(*KeyedContext[K], T, *Emitter[Out]) error { return nil }
		}
		ki.fn = func(ctx *KeyedContext[K], rec T, out *Emitter[Out]) error {
			if at != nil {
				ctx.et.ts = at(rec)
			}
			return onRecord(ctx, rec, out)
		}
		return ti, nil
	}
	return out
}

// timerState declares the timer table of an operator with timers.
type timerState struct{ stateBinding }

func (s *timerState) newTable(max int) state.Table { return state.NewTimerTable(s.name, max) }

// keyedParts is what an operator with timers needs of its keyed instance.
type keyedParts[K keygroups.Key, Out any] interface {
	plan.Transform
	plan.Stateful
	contexts() []*KeyedContext[K]
	emitter() *Emitter[Out]
	stateBackend() *state.Backend
}

func (t *keyedInstance[T, K, Out]) contexts() []*KeyedContext[K] { return []*KeyedContext[K]{&t.ctx} }
func (t *keyedInstance[T, K, Out]) emitter() *Emitter[Out]       { return &t.em }
func (t *keyedInstance[T, K, Out]) stateBackend() *state.Backend { return t.backend }

// timedInstance adds event time and timers to a keyed instance.
type timedInstance[K keygroups.Key, Out any] struct {
	keyed   keyedParts[K, Out]
	name    string
	onTimer TimerFunc[K, Out]
	onEnd   func(out *Emitter[Out]) error
	scope   eventScope
	ended   bool
	// bindExtra points an operator's other outputs (late records) at the
	// task's writers, with each batch.
	bindExtra func(out plan.Output)
}

// Open opens the keyed instance and finds its timer table.
func (t *timedInstance[K, Out]) Open(info plan.TaskInfo) error {
	if err := t.keyed.Open(info); err != nil {
		return err
	}
	be := t.keyed.stateBackend()
	i, ok := be.Index(timersTable)
	if !ok {
		return fmt.Errorf("operator %q: no timer table", t.name)
	}
	t.scope = eventScope{table: be.Table(i).(*state.TimerTable), wm: plan.MinWatermark, ts: plan.MinWatermark, now: time.Now}
	t.scope.table.Own(info.KeyGroups)
	for _, c := range t.keyed.contexts() {
		c.et = &t.scope
	}
	return nil
}

func (t *timedInstance[K, Out]) Close() error { return t.keyed.Close() }

// Process hands the batch to the keyed instance.
func (t *timedInstance[K, Out]) Process(input int, b plan.Batch, out plan.Output) error {
	if t.bindExtra != nil {
		t.bindExtra(out)
	}
	return t.keyed.Process(input, b, out)
}

// Finish finishes the keyed instance (timers fired with the last watermark).
func (t *timedInstance[K, Out]) Finish(out plan.Output) error { return t.keyed.Finish(out) }

// SnapshotState snapshots the key groups, timers and watermark included.
func (t *timedInstance[K, Out]) SnapshotState(id uint64) (plan.Snapshot, error) {
	return t.keyed.SnapshotState(id)
}

// SnapshotStateAsync is SnapshotState in two steps (plan.AsyncStateful)
// when the keyed instance can take it so; otherwise it encodes at once.
func (t *timedInstance[K, Out]) SnapshotStateAsync(id uint64) (plan.PendingSnapshot, error) {
	if a, ok := t.keyed.(plan.AsyncStateful); ok {
		return a.SnapshotStateAsync(id)
	}
	snap, err := t.keyed.SnapshotState(id)
	if err != nil {
		return nil, err
	}
	return encodedSnapshot(snap), nil
}

// TrackChanges forwards to the keyed instance when it checkpoints
// incrementally (plan.Incremental).
func (t *timedInstance[K, Out]) TrackChanges() {
	if in, ok := t.keyed.(plan.Incremental); ok {
		in.TrackChanges()
	}
}

// ConfirmCheckpoint forwards to the keyed instance (plan.Incremental).
func (t *timedInstance[K, Out]) ConfirmCheckpoint(id uint64) {
	if in, ok := t.keyed.(plan.Incremental); ok {
		in.ConfirmCheckpoint(id)
	}
}

// encodedSnapshot is a snapshot encoded at the barrier.
type encodedSnapshot plan.Snapshot

func (e encodedSnapshot) Encode() (plan.Snapshot, error) { return plan.Snapshot(e), nil }
func (encodedSnapshot) Release()                         {}

// RestoreState restores the key groups; the operator's watermark resumes at
// the lowest one its key groups were checkpointed with, so it never goes
// back downstream.
func (t *timedInstance[K, Out]) RestoreState(s plan.Snapshot) error {
	if err := t.keyed.RestoreState(s); err != nil {
		return err
	}
	t.scope.wm = max(t.scope.wm, t.scope.table.RestoredWatermark())
	t.scope.table.SetWatermark(t.scope.wm)
	return nil
}

// OnWatermark fires the event-time timers up to wm in time order, and at the
// end of input calls OnEnd.
func (t *timedInstance[K, Out]) OnWatermark(wm int64, out plan.Output) (int64, error) {
	if wm > t.scope.wm {
		t.scope.wm = wm
		t.scope.table.SetWatermark(wm)
	}
	em := t.keyed.emitter()
	em.bind(out)
	if err := t.fire(state.EventTime, t.scope.wm, em); err != nil {
		return 0, err
	}
	if t.scope.wm == plan.MaxWatermark && !t.ended {
		t.ended = true
		if t.onEnd != nil {
			if err := t.onEnd(em); err != nil {
				return 0, fmt.Errorf("operator %q: on end: %w", t.name, err)
			}
		}
	}
	return t.scope.wm, nil
}

// OnProcessingTime fires the processing-time timers due at now.
func (t *timedInstance[K, Out]) OnProcessingTime(now time.Time, out plan.Output) error {
	em := t.keyed.emitter()
	em.bind(out)
	return t.fire(state.ProcessingTime, now.UnixNano(), em)
}

// fire runs OnTimer for every timer of domain d due at upTo, earliest first;
// timers a callback sets that are due fire in the same pass.
func (t *timedInstance[K, Out]) fire(d state.TimeDomain, upTo int64, em *Emitter[Out]) error {
	ctx := t.keyed.contexts()[0]
	var waiting []state.Timer // of key groups a live rescale has not released yet
	defer func() {
		for _, tm := range waiting {
			t.scope.table.Register(tm)
		}
	}()
	for {
		tm, ok := t.scope.table.PopDue(d, upTo)
		if !ok {
			return nil
		}
		if _, moving := t.scope.moved[tm.Group]; moving {
			waiting = append(waiting, tm)
			continue
		}
		if t.onTimer == nil {
			continue
		}
		if err := t.keyed.stateBackend().Materialise(tm.Group); err != nil {
			return fmt.Errorf("operator %q: timer at %d of key %q: %w", t.name, tm.At, tm.Key, err)
		}
		ctx.k = keyFromString[K](tm.Key)
		ctx.core.group, ctx.core.key = tm.Group, tm.Key
		t.scope.ts = tm.At
		if err := t.onTimer(ctx, Timer{At: time.Unix(0, tm.At), ProcessingTime: d == state.ProcessingTime}, em); err != nil {
			var re *RecordError
			if errors.As(err, &re) {
				return err
			}
			return fmt.Errorf("operator %q: timer at %d of key %q: %w", t.name, tm.At, tm.Key, err)
		}
	}
}

// LazyRestore is the keyed instance's backend (plan.LazyRestoring).
func (t *timedInstance[K, Out]) LazyRestore() plan.LazyRestorer { return t.keyed.stateBackend() }
