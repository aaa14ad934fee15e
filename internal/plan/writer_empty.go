package plan

// EmptyBatch is a batch of no records of the writer's type: it carries a
// watermark on a channel that has no records to send with it.
func (w *Writer[T]) EmptyBatch() Batch { return Records[T]([]T{}) } // not nil: a nil batch encodes as nil, which is no batch
