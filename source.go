package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// Source is a replayable input read by one source instance.
type Source[T any] interface {
	// Open prepares the instance.
	Open(info TaskInfo) error
	// Read fills buf from the front and returns how many records it wrote; done
	// reports the end of a bounded input.
	Read(buf []T) (n int, done bool, err error)
	// Offset is the position of the next record; SeekTo returns to one.
	Offset() int64
	// SeekTo moves to an offset taken from a checkpoint.
	SeekTo(offset int64) error
	// Close releases resources.
	Close() error
}

// FromSource adds a source operator; newSource makes one Source per instance.
//
// A source keeps its checkpoint's parallelism on a restore; a source read by
// splits (FromSplitSource, Generate) can change it.
func FromSource[T any](g *Graph, name string, newSource func(instance int) Source[T], opts ...OpOption) Stream[T] {
	op, _ := g.addOperator(name, plan.KindSource, opts)
	op.New = func(instance int) (plan.Instance, error) {
		src := newSource(instance)
		if src == nil {
			return nil, fmt.Errorf("source %q: no source for instance %d", name, instance)
		}
		return &sourceInstance[T]{name: name, src: src}, nil
	}
	return newStream[T](g, op)
}

// sourceInstance adapts a typed Source to the runtime.
type sourceInstance[T any] struct {
	name string
	src  Source[T]
	buf  []T
	em   Emitter[T]
}

func (s *sourceInstance[T]) Open(info plan.TaskInfo) error { return s.src.Open(taskInfoOf(info)) }
func (s *sourceInstance[T]) Close() error                  { return s.src.Close() }
func (s *sourceInstance[T]) Offset() int64                 { return s.src.Offset() }
func (s *sourceInstance[T]) SeekTo(offset int64) error     { return s.src.SeekTo(offset) }

// Read reads up to max records and emits them.
func (s *sourceInstance[T]) Read(max int, out plan.Output) (int, bool, error) {
	if cap(s.buf) < max {
		s.buf = make([]T, max)
	}
	n, done, err := s.src.Read(s.buf[:max])
	if err != nil {
		return 0, false, fmt.Errorf("source %q: %w", s.name, err)
	}
	s.em.bind(out)
	for _, v := range s.buf[:n] {
		s.em.Emit(v)
	}
	return n, done, nil
}

// Unbounded is the count to pass to Generate for a source that never ends.
const Unbounded int64 = -1
