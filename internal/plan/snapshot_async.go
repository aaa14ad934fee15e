package plan

import "io"

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

// Incremental is an AsyncStateful instance that can snapshot key groups as
// deltas on its state at the last checkpoint it was told completed.
type Incremental interface {
	AsyncStateful
	// TrackChanges starts noting which keys change; called once, before
	// the instance restores or processes anything.
	TrackChanges()
	// ConfirmCheckpoint says checkpoint id completed with this instance's
	// snapshot of it: later deltas build on it.
	ConfirmCheckpoint(id uint64)
}

// IncrementalPending is a PendingSnapshot of an Incremental instance.
type IncrementalPending interface {
	PendingSnapshot
	// EncodeIncremental is Encode that writes key group g as a delta on its
	// state at checkpoint Snapshot.DeltaSince when useDelta(g) says so and
	// the group was not replaced as a whole since; Snapshot.Deltas lists
	// the groups so written.
	EncodeIncremental(useDelta func(g int) bool) (Snapshot, error)
}

// AppendingPending is a PendingSnapshot that writes its key groups' blobs
// one after another into the caller's buffer instead of one allocation
// each: a task lays its checkpoint out in a buffer it reuses, and the
// state is copied once less.
type AppendingPending interface {
	PendingSnapshot
	// EncodeAppend appends the blob of every key group to dst as
	// EncodeIncremental gives them (Encode when useDelta is nil) and returns
	// dst and the snapshot, whose KeyGroups are the blobs' places in it,
	// Sections their [offset, size]. A blob written straight into dst is
	// not kept: encoding its group again fails.
	EncodeAppend(dst []byte, useDelta func(g int) bool) ([]byte, Snapshot, error)
}

// StreamingPending is an AppendingPending that can write its key groups'
// blobs to a writer as it encodes them, keeping about one group in memory:
// a task streams its checkpoint into the store instead of laying the whole
// state out first.
type StreamingPending interface {
	AppendingPending
	// EncodeStream writes the blob of every key group to w as EncodeAppend
	// lays them out in dst, gathering them in buf (returned for reuse). It
	// returns the snapshot, whose Sections are the blobs' places in what
	// it wrote and whose KeyGroups is nil, and how many bytes it wrote.
	EncodeStream(w io.Writer, buf []byte, useDelta func(g int) bool) (snap Snapshot, written int64, out []byte, err error)
}
