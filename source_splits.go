package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// SplitSource is a Source whose position is a list of splits. A restore may
// run it at another parallelism than its checkpoint's: each instance is
// handed the splits it now serves at their offsets. Instances beyond the
// number of splits get none and are done at once (as consumers beyond a
// topic's partitions are idle).
type SplitSource[T any] interface {
	Source[T]
	// Splits is the instance's splits and their offsets now.
	Splits() []Split
	// AssignSplits replaces the instance's splits; it is called after Open
	// and before the first Read.
	AssignSplits(splits []Split) error
}

// FromSplitSource adds a source operator read by splits; newSource makes one
// SplitSource per instance. Unlike FromSource's, its parallelism may change
// when the job is restored from a checkpoint.
func FromSplitSource[T any](g *Graph, name string, newSource func(instance int) SplitSource[T], opts ...OpOption) Stream[T] {
	op, _ := g.addOperator(name, plan.KindSource, opts)
	op.Splittable = true
	op.New = func(instance int) (plan.Instance, error) {
		src := newSource(instance)
		if src == nil {
			return nil, fmt.Errorf("source %q: no source for instance %d", name, instance)
		}
		return &splitSourceInstance[T]{sourceInstance[T]{name: name, src: src}, src}, nil
	}
	return newStream[T](g, op)
}

// splitSourceInstance adapts a typed SplitSource to the runtime.
type splitSourceInstance[T any] struct {
	sourceInstance[T]
	split SplitSource[T]
}

func (s *splitSourceInstance[T]) Splits() []plan.Split { return planSplits(s.split.Splits()) }
func (s *splitSourceInstance[T]) AssignSplits(splits []plan.Split) error {
	if err := s.split.AssignSplits(splitsOf(splits)); err != nil {
		return fmt.Errorf("source %q: %w", s.name, err)
	}
	return nil
}
