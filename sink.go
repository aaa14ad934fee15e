package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// Sink consumes a stream's records in one sink instance.
type Sink[T any] interface {
	// Open prepares the instance.
	Open(info TaskInfo) error
	// Write consumes one batch (the slice is reused after Write returns).
	Write(batch []T) error
	// Finish flushes everything at the end of input.
	Finish() error
	// Close releases resources.
	Close() error
}

// ToSink adds a sink operator; newSink makes one Sink per instance.
func ToSink[T any](s Stream[T], name string, newSink func(instance int) Sink[T], opts ...OpOption) {
	op, _ := s.g.addOperator(name, plan.KindSink, opts, s.up)
	op.New = func(instance int) (plan.Instance, error) {
		sk := newSink(instance)
		if sk == nil {
			return nil, fmt.Errorf("sink %q: no sink for instance %d", name, instance)
		}
		return &sinkInstance[T]{name: name, sink: sk}, nil
	}
}

// sinkInstance adapts a typed Sink to the runtime.
type sinkInstance[T any] struct {
	name string
	sink Sink[T]
	buf  []T
}

func (s *sinkInstance[T]) Open(info plan.TaskInfo) error { return s.sink.Open(info) }
func (s *sinkInstance[T]) Close() error                  { return s.sink.Close() }
func (s *sinkInstance[T]) Finish() error                 { return s.sink.Finish() }

// Write converts the batch to T and hands it over.
func (s *sinkInstance[T]) Write(recs []any) error {
	s.buf = s.buf[:0]
	for _, r := range recs {
		s.buf = append(s.buf, r.(T))
	}
	if err := s.sink.Write(s.buf); err != nil {
		return fmt.Errorf("sink %q: %w", s.name, err)
	}
	return nil
}
