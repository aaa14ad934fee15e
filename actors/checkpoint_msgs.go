package actors

import (
	"time"

	"github.com/weirstream/weir/store"
)

// triggerMsg makes a source task snapshot and inject barrier id.
// The final checkpoint (end of input) is always aligned, so it covers every
// record: nothing is left in flight after it. The stop checkpoint is always
// unaligned, capturing what is in flight, and the source reads no more after
// its barrier.
type triggerMsg struct {
	priority
	id    uint64
	final bool
	stop  bool
}

// barrierMsg carries barrier id from a producer to a channel. lastSeq is the
// seq of the last buffer sent before it; pending are the sealed pre-barrier
// buffers still waiting for credit at the producer (they follow later as data).
//
// It travels in the normal lane, behind the data sent before it, so the channel
// has received every earlier buffer when it sees the barrier; the channel then
// lets the barrier overtake its queue (unaligned) or not (aligned). final
// marks the end-of-input checkpoint, which always travels aligned.
type barrierMsg struct {
	id        uint64
	lastSeq   uint64
	unaligned bool
	final     bool
	pending   []*Buffer
}

// barrierOvertakeMsg delivers a barrier ahead of queued data, with copies of
// every buffer before it that the consumer may not have processed yet.
type barrierOvertakeMsg struct {
	priority
	input     int
	id        uint64
	lastSeq   uint64
	overtaken []*Buffer
}

// barrierInOrderMsg delivers a barrier behind all data before it (aligned); the
// channel then holds further data until unblocked. final marks the
// end-of-input checkpoint.
type barrierInOrderMsg struct {
	input   int
	id      uint64
	lastSeq uint64
	final   bool
}

// unblockMsg lets an aligned channel resume delivery after barrier id.
type unblockMsg struct {
	priority
	id uint64
}

// switchUnalignedMsg asks a channel to deliver barrier id now, overtaking.
type switchUnalignedMsg struct {
	priority
	id uint64
}

// alignTimeoutMsg fires an aligner timer.
type alignTimeoutMsg struct {
	priority
	id uint64
}

// taskAckMsg reports a task's durable part of checkpoint id to the job.
type taskAckMsg struct {
	priority
	id        uint64
	op        int
	instance  int
	snap      store.TaskSnapshot
	alignment time.Duration
	unaligned bool
	stateB    int64
	inflightB int64
	// inflightRefB is channel state referred to in earlier checkpoints'
	// blobs, not written again.
	inflightRefB int64
	buffers      int64
}

// taskDeclineMsg reports that a task could not take its part of checkpoint id.
type taskDeclineMsg struct {
	priority
	id       uint64
	op       int
	instance int
	reason   string
}

// checkpointDoneMsg tells tasks that checkpoint id completed (sinks commit).
type checkpointDoneMsg struct {
	priority
	id uint64
}

// sinkCommittedMsg tells the job that a sink task committed (made visible)
// everything checkpoint id covers. The job ends only once every sink has
// committed its final or stop checkpoint.
type sinkCommittedMsg struct {
	priority
	op, instance int
	gen          int
	id           uint64
}

// stopDeadlineMsg ends a stopping job whose stop checkpoint did not complete
// in time: it stops at the last completed checkpoint.
type stopDeadlineMsg struct{ priority }

// checkpointAbortMsg tells tasks that checkpoint id was aborted.
type checkpointAbortMsg struct {
	priority
	id uint64
}

// manifestDoneMsg reports the manifest write of checkpoint id.
type manifestDoneMsg struct {
	priority
	id  uint64
	err error
}

// sourceIdleMsg says a source has read all it will read until told to finish.
type sourceIdleMsg struct {
	priority
	op, instance int
	gen          int
}

// finishSourceMsg lets an idle source end its outputs after the final checkpoint.
type finishSourceMsg struct{ priority }

// coordTickMsg drives the coordinator's logical clock.
type coordTickMsg struct{ priority }
