package plan

// AsyncStateful is a Stateful instance that can take its snapshot in two
// steps: a cheap view of its state at the barrier, on the task's goroutine,
// and the encoding of that view on another goroutine while the task goes on.
type AsyncStateful interface {
	Stateful
	// SnapshotStateAsync takes the view of the state for checkpoint id.
	SnapshotStateAsync(id uint64) (PendingSnapshot, error)
}

// PendingSnapshot is the view an AsyncStateful instance took at a barrier.
type PendingSnapshot interface {
	// Encode returns the snapshot as SnapshotState would have at the
	// barrier; it may run on any goroutine.
	Encode() (Snapshot, error)
	// Release lets go of the view, on the task's goroutine, when the
	// checkpoint is abandoned before Encode; Encode then fails.
	Release()
}
