package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/state"
)

// ConnectedStreams are two keyed streams with the same key type, to be
// processed by one operator whose keyed state and timers both share.
type ConnectedStreams[A, B any, K keygroups.Key] struct {
	a KeyedStream[A, K]
	b KeyedStream[B, K]
}

// Connect pairs two keyed streams: records of both with the same key reach
// the same instance, with that key's state in scope (a join).
func Connect[A, B any, K keygroups.Key](a KeyedStream[A, K], b KeyedStream[B, K]) ConnectedStreams[A, B, K] {
	return ConnectedStreams[A, B, K]{a: a, b: b}
}

// CoFunctions are the callbacks of a two-input keyed operator.
type CoFunctions[A, B any, K keygroups.Key, Out any] struct {
	// OnA and OnB run for each record of the first and the second input
	// (both required).
	OnA ProcessFunc[A, K, Out]
	OnB ProcessFunc[B, K, Out]
	// OnTimer runs when a timer of a key fires (either input may set it).
	OnTimer TimerFunc[K, Out]
	// OnEnd runs once per instance after both inputs ended and every
	// event-time timer fired.
	OnEnd func(out *Emitter[Out]) error
}

// CoProcess adds a keyed operator with two inputs. Its keyed state
// (WithState) and timers are shared by both: OnA may store what OnB reads.
// Its watermark is the minimum of both inputs'.
func CoProcess[A, B any, K keygroups.Key, Out any](cs ConnectedStreams[A, B, K], name string, fns CoFunctions[A, B, K, Out], opts ...OpOption) Stream[Out] {
	g := cs.a.s.g
	if fns.OnA == nil || fns.OnB == nil {
		g.errs = append(g.errs, fmt.Errorf("operator %q: CoFunctions need OnA and OnB", name))
	}
	if cs.b.s.g != g {
		g.errs = append(g.errs, fmt.Errorf("operator %q: its second input belongs to another graph", name))
	}
	out := processTimed(cs.a, name, func(*timedInstance[K, Out]) KeyedFunctions[A, K, Out] {
		return KeyedFunctions[A, K, Out]{OnRecord: fns.OnA, OnTimer: fns.OnTimer, OnEnd: fns.OnEnd}
	}, opts...)
	op := g.job.Operators[len(g.job.Operators)-1]
	g.addInput(op, cs.b.upstream())
	inner := op.New
	atB, onB, keyB := cs.b.s.eventTime, fns.OnB, cs.b.keyFn
	op.New = func(instance int) (plan.Instance, error) {
		in, err := inner(instance)
		if err != nil {
			return nil, err
		}
		ti := in.(*timedInstance[K, Out])
		b := &keyedInstance[B, K, Out]{name: name, keyFn: keyB, fn: func(ctx *KeyedContext[K], rec B, out *Emitter[Out]) error {
			if atB != nil {
				ctx.et.ts = atB(rec)
			}
			if onB == nil {
				return nil
			}
			return onB(ctx, rec, out)
		}}
		ti.keyed = &coKeyedInstance[A, B, K, Out]{a: ti.keyed.(*keyedInstance[A, K, Out]), b: b}
		return ti, nil
	}
	return out
}

// coKeyedInstance runs the two inputs of a connected operator over one set
// of keyed state: b shares a's backend and tables.
type coKeyedInstance[A, B any, K keygroups.Key, Out any] struct {
	a *keyedInstance[A, K, Out]
	b *keyedInstance[B, K, Out]
}

// Open opens the first input's instance and points the second at its state.
func (c *coKeyedInstance[A, B, K, Out]) Open(info plan.TaskInfo) error {
	if err := c.a.Open(info); err != nil {
		return err
	}
	c.b.backend, c.b.owners = c.a.backend, c.a.owners
	c.b.ctx.info, c.b.ctx.instance, c.b.ctx.backend = taskInfoOf(info), info.Instance, c.a.backend
	c.b.ctx.core.tables, c.b.ctx.core.op = c.a.ctx.core.tables, c.a.ctx.core.op
	return nil
}

func (c *coKeyedInstance[A, B, K, Out]) Close() error             { return c.a.Close() }
func (c *coKeyedInstance[A, B, K, Out]) Finish(plan.Output) error { return nil }

// Process hands a batch to the instance of its input.
func (c *coKeyedInstance[A, B, K, Out]) Process(input int, b plan.Batch, out plan.Output) error {
	if input == 0 {
		return c.a.Process(input, b, out)
	}
	return c.b.Process(input, b, out)
}

func (c *coKeyedInstance[A, B, K, Out]) SnapshotState(id uint64) (plan.Snapshot, error) {
	return c.a.SnapshotState(id)
}
func (c *coKeyedInstance[A, B, K, Out]) RestoreState(s plan.Snapshot) error {
	return c.a.RestoreState(s)
}
func (c *coKeyedInstance[A, B, K, Out]) contexts() []*KeyedContext[K] {
	return []*KeyedContext[K]{&c.a.ctx, &c.b.ctx}
}
func (c *coKeyedInstance[A, B, K, Out]) emitter() *Emitter[Out]       { return &c.a.em }
func (c *coKeyedInstance[A, B, K, Out]) stateBackend() *state.Backend { return c.a.backend }
