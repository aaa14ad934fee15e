package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// TaskInfo tells a source or sink instance who it is.
type TaskInfo = plan.TaskInfo

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

func (s *sourceInstance[T]) Open(info plan.TaskInfo) error { return s.src.Open(info) }
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

// Generate adds a deterministic, replayable generator source: record i is gen(i),
// for i in [0, count) (or forever with Unbounded). Instance j of p produces the
// indices j, j+p, j+2p, …; its offset is how many it has produced.
func Generate[T any](g *Graph, name string, count int64, gen func(i int64) T, opts ...OpOption) Stream[T] {
	return FromSource(g, name, func(instance int) Source[T] {
		return &generator[T]{count: count, gen: gen, instance: int64(instance)}
	}, opts...)
}

// generator is the source made by Generate.
type generator[T any] struct {
	count       int64
	gen         func(int64) T
	instance, p int64 // p is set by Open
	offset      int64
}

func (s *generator[T]) Open(info TaskInfo) error {
	s.p = int64(info.Parallelism)
	return nil
}
func (s *generator[T]) Close() error  { return nil }
func (s *generator[T]) Offset() int64 { return s.offset }

// SeekTo makes the next record the one at offset.
func (s *generator[T]) SeekTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("generator: negative offset %d", offset)
	}
	s.offset = offset
	return nil
}

// Read generates the next records.
func (s *generator[T]) Read(buf []T) (int, bool, error) {
	n := 0
	for n < len(buf) {
		i := s.instance + s.offset*s.p
		if s.count >= 0 && i >= s.count {
			return n, true, nil
		}
		buf[n] = s.gen(i)
		n++
		s.offset++
	}
	return n, s.count >= 0 && s.instance+s.offset*s.p >= s.count, nil
}
