package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// Union merges streams of one record type into one stream, in an operator
// named name that runs at the highest parallelism of its inputs (each input
// forward when its parallelism matches, rebalanced otherwise, unless the
// stream names a partitioner). Its watermark is the minimum of its inputs'.
// The union keeps the event time of its first input when every input has
// one.
func Union[T any](name string, streams ...Stream[T]) Stream[T] {
	if len(streams) == 0 {
		panic("weir: Union of no streams")
	}
	g := streams[0].g
	p := 1
	ups := make([]upstream, len(streams))
	eventTime := streams[0].eventTime
	for i, s := range streams {
		if s.g != g {
			g.errs = append(g.errs, fmt.Errorf("operator %q: input %d belongs to another graph", name, i))
		}
		if s.up.from != nil {
			p = max(p, s.up.from.Parallelism)
		}
		if s.eventTime == nil {
			eventTime = nil
		}
		ups[i] = s.up
	}
	op, _ := g.addOperator(name, plan.KindTransform, []OpOption{Parallelism(p)}, ups...)
	op.New = func(int) (plan.Instance, error) {
		return &statelessInstance[T, T]{name: name, fn: func(in T, out *Emitter[T]) error {
			out.Emit(in)
			return nil
		}}, nil
	}
	out := newStream[T](g, op)
	out.eventTime = eventTime
	return out
}
