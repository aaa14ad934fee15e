package weir

import "github.com/weirstream/weir/internal/plan"

// Emitter sends an operator's output records downstream.
type Emitter[T any] struct {
	c plan.Collector
}

// Emit sends one record.
func (e *Emitter[T]) Emit(v T) { e.c.Collect(v) }
