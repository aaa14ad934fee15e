package actors

import (
	"sync/atomic"
)

// Metrics are a job's live counters, safe to read from any goroutine.
type Metrics struct {
	// RecordsIn counts records read by sources.
	RecordsIn atomic.Int64
	// RecordsOut counts records written by sinks.
	RecordsOut atomic.Int64
	// BuffersSent counts buffers handed to channels.
	BuffersSent atomic.Int64
	// MaxChannelOccupancy is the most buffers any channel ever held.
	MaxChannelOccupancy atomic.Int64
	// MaxOutbox is the most sealed buffers a producer ever held waiting for credit
	// on one channel.
	MaxOutbox atomic.Int64
	// MaxPendingInput is the most delivered, unprocessed buffers a task ever held
	// for one input.
	MaxPendingInput atomic.Int64
	// MaxAlignTimers is the most alignment timers a task ever held pending.
	MaxAlignTimers atomic.Int64
	// MaxSnapshotPauseNs is the longest a task spent taking its snapshot at
	// a barrier (the view of its state; encoding runs later elsewhere when
	// snapshots are asynchronous), in nanoseconds.
	MaxSnapshotPauseNs atomic.Int64
	// MaxSnapshotWaitNs is the longest a task waited, after a barrier, for a
	// key group its asynchronous snapshot was encoding, in nanoseconds.
	MaxSnapshotWaitNs atomic.Int64
	// MaxCheckpointsInFlight is the most checkpoints the coordinator ever had
	// in flight at once.
	MaxCheckpointsInFlight atomic.Int64
	// SnapshotsEncoding is how many tasks are encoding an asynchronous
	// snapshot now (streamed snapshots write as they encode).
	SnapshotsEncoding atomic.Int64
	// BlobsStoring is how many tasks are storing their part of a checkpoint
	// now: encoding it, writing it and waiting for the store to make it
	// durable.
	BlobsStoring atomic.Int64
}

// raise stores v into m if it is larger.
func raise(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}
