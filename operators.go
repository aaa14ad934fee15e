package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// Map applies fn to every record.
func Map[In, Out any](s Stream[In], name string, fn func(In) Out, opts ...OpOption) Stream[Out] {
	return transform[In, Out](s, name, opts, func(in In, out *Emitter[Out]) error {
		out.Emit(fn(in))
		return nil
	})
}

// MapErr applies fn to every record; an error fails the task.
func MapErr[In, Out any](s Stream[In], name string, fn func(In) (Out, error), opts ...OpOption) Stream[Out] {
	return transform[In, Out](s, name, opts, func(in In, out *Emitter[Out]) error {
		v, err := fn(in)
		if err != nil {
			return err
		}
		out.Emit(v)
		return nil
	})
}

// FlatMap lets fn emit any number of records for each input record.
func FlatMap[In, Out any](s Stream[In], name string, fn func(In, *Emitter[Out]) error, opts ...OpOption) Stream[Out] {
	return transform[In, Out](s, name, opts, fn)
}

// Filter keeps the records for which keep returns true.
func Filter[T any](s Stream[T], name string, keep func(T) bool, opts ...OpOption) Stream[T] {
	out := transform[T, T](s, name, opts, func(in T, out *Emitter[T]) error {
		if keep(in) {
			out.Emit(in)
		}
		return nil
	})
	out.eventTime = s.eventTime // records keep their event time
	return out
}

// transform adds a stateless record-at-a-time operator.
func transform[In, Out any](s Stream[In], name string, opts []OpOption, fn func(In, *Emitter[Out]) error) Stream[Out] {
	op, _ := s.g.addOperator(name, plan.KindTransform, opts, s.up)
	op.New = func(int) (plan.Instance, error) { return &statelessInstance[In, Out]{name: name, fn: fn}, nil }
	return newStream[Out](s.g, op)
}

// statelessInstance runs a per-record function.
type statelessInstance[In, Out any] struct {
	name string
	fn   func(In, *Emitter[Out]) error
	em   Emitter[Out]
	ctx  OpContext
}

func (t *statelessInstance[In, Out]) Open(info plan.TaskInfo) error {
	t.ctx.info = info
	return nil
}
func (t *statelessInstance[In, Out]) Close() error { return nil }
func (t *statelessInstance[In, Out]) Finish(plan.Output) error {
	return nil
}

// Process runs fn on every record of the batch.
func (t *statelessInstance[In, Out]) Process(_ int, b plan.Batch, out plan.Output) error {
	t.em.bind(out)
	recs, ok := plan.RecordsOf[In](b)
	if !ok {
		return fmt.Errorf("operator %q: got a batch of %T, want %T records", t.name, b, *new(In))
	}
	cur := -1
	return guard(t.name, b, &cur, func() error {
		for i, r := range recs {
			cur = i
			if err := t.fn(r, &t.em); err != nil {
				return &RecordError{Operator: t.name, Record: showRecord(r), Err: err}
			}
		}
		return nil
	})
}

// OpContext tells a function which operator instance runs it, so per-instance
// resources (a Sleeper, a buffer) need no locking.
type OpContext struct {
	info plan.TaskInfo
}

// Instance is the index of the running instance.
func (c *OpContext) Instance() int { return c.info.Instance }

// Parallelism is the operator's number of instances.
func (c *OpContext) Parallelism() int { return c.info.Parallelism }

// MapWithContext is Map with the running instance's context.
func MapWithContext[In, Out any](s Stream[In], name string, fn func(ctx *OpContext, in In) Out, opts ...OpOption) Stream[Out] {
	op, _ := s.g.addOperator(name, plan.KindTransform, opts, s.up)
	op.New = func(int) (plan.Instance, error) {
		inst := &statelessInstance[In, Out]{name: name}
		inst.fn = func(in In, out *Emitter[Out]) error {
			out.Emit(fn(&inst.ctx, in))
			return nil
		}
		return inst, nil
	}
	return newStream[Out](s.g, op)
}
