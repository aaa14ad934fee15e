package weir

import "github.com/weirstream/weir/internal/plan"

// lateWriter is the writer of a window operator's late-record output: a
// type of its own, so the operator's result emitter and its late emitter
// each find their own writers among the task's.
type lateWriter[T any] struct{ *plan.Writer[T] }

// lateStream is the stream of late records out of the window operator op.
func lateStream[T any](g *Graph, op *plan.Operator) Stream[T] {
	s := newStream[T](g, op)
	pool := s.pool
	s.up.newWriter = func(cfg plan.WriterConfig) (plan.EdgeWriter, error) {
		w, err := plan.NewWriter(cfg, nil, pool)
		if err != nil {
			return nil, err
		}
		return lateWriter[T]{w}, nil
	}
	return s
}

// lateEmitter sends late records to the late stream's writers.
type lateEmitter[T any] struct{ ws []lateWriter[T] }

func (e *lateEmitter[T]) bind(out plan.Output) {
	e.ws = e.ws[:0]
	for _, w := range out.Writers() {
		if lw, ok := w.(lateWriter[T]); ok {
			e.ws = append(e.ws, lw)
		}
	}
}

func (e *lateEmitter[T]) emit(v T) {
	for _, w := range e.ws {
		w.Write(v)
	}
}
