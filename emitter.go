package weir

import "github.com/weirstream/weir/internal/plan"

// Emitter sends an operator's output records downstream.
type Emitter[T any] struct {
	ws []*plan.Writer[T]
}

// bind points the emitter at a task's output writers; it is called once per
// batch, so Emit itself does no lookups.
func (e *Emitter[T]) bind(out plan.Output) {
	e.ws = e.ws[:0]
	for _, w := range out.Writers() {
		// Writers of another type belong to another output of the operator
		// (a window's late records).
		if tw, ok := w.(*plan.Writer[T]); ok {
			e.ws = append(e.ws, tw)
		}
	}
}

// Emit sends one record.
func (e *Emitter[T]) Emit(v T) {
	for _, w := range e.ws {
		w.Write(v)
	}
}
