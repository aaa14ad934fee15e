package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// Buffer is a batch of records on one channel. Seq numbers start at 1 and have no
// gaps on a channel. Its records are not changed once it is sent; only its
// consumer marks it captured.
type Buffer struct {
	Seq     uint64
	Records plan.Batch
	// captured is set by the consumer task when the buffer joins a
	// checkpoint's channel state; its batch is then never recycled.
	captured bool
	// round is the replay round of restored channel state (the checkpoint
	// whose channel state it first became); 0 for new input.
	round uint64
	// Mark is the watermark that follows the buffer's records (none, a
	// watermark, or idle); captured channel state keeps it, and a restore
	// replays it after the records.
	Mark Mark
	// arrived is when the buffer was delivered to its consumer (zero for
	// restored channel state); moved counts, under a live rescale, the
	// records of moving key groups in it (rescale_flow.go).
	arrived time.Time
	moved   int
	// origin is when the source read the earliest record the buffer was
	// made from, on this node's clock (zero: not known; see package
	// rescale/flow, buffer_origin.go).
	origin time.Time
}

// priority marks control messages that overtake queued data in the weir mailbox.
type priority struct{}

// WeirPriority puts the message in the mailbox's priority lane.
func (priority) WeirPriority() {}

// --- producer task → channel -------------------------------------------------

// dataMsg carries one buffer from a producer to its channel.
type dataMsg struct{ buf *Buffer }

// eosMsg ends a channel's stream after the buffer with seq LastSeq.
type eosMsg struct{ lastSeq uint64 }

// --- channel → consumer task -------------------------------------------------

// deliverMsg hands one buffer to the consumer task.
type deliverMsg struct {
	input int
	buf   *Buffer
}

// deliverEOSMsg tells the consumer the input has ended.
type deliverEOSMsg struct{ input int }

// --- consumer task → channel -------------------------------------------------

// ackMsg says the consumer has processed every buffer up to seq.
type ackMsg struct {
	priority
	seq uint64
}

// --- channel → producer task -------------------------------------------------

// creditMsg returns n slots of a channel to its producer.
type creditMsg struct {
	priority
	output  int
	channel int
	n       int
}

// --- wiring and lifecycle -----------------------------------------------------

// channelWireMsg tells a channel who produces into it.
type channelWireMsg struct {
	priority
	producer *actor.PID
	output   int // the producer's output edge index
	channel  int // the consumer instance index on that edge
}

// taskReadyMsg reports a task's input channels to the job.
type taskReadyMsg struct {
	priority
	op, instance int
	gen          int // the task's incarnation; stale ones are ignored
	inputs       []*actor.PID
}

// wireMsg gives a task its output channels: outputs[edge][consumer instance].
type wireMsg struct {
	priority
	outputs [][]*actor.PID
}

// startMsg lets sources begin reading once everything is wired.
type startMsg struct{ priority }

// taskFinishedMsg reports that a task has drained its inputs and flushed its outputs.
type taskFinishedMsg struct {
	priority
	op, instance int
	gen          int
}

// taskFailedMsg reports a failure seen by the job's supervisor strategy.
type taskFailedMsg struct {
	priority
	who    *actor.PID
	reason any
}

// stopJobMsg asks the job to stop: at once with a stop checkpoint, or, with
// drain, by ending the sources and draining (cancel, interrupt, duration).
type stopJobMsg struct {
	priority
	reason string
	drain  bool
}

// flushTickMsg makes a task seal partially filled output batches.
type flushTickMsg struct{ priority }

// pumpMsg makes a task continue processing queued input or reading its source.
type pumpMsg struct{}

// endInputMsg makes a source behave as if its input had ended.
type endInputMsg struct{ priority }
