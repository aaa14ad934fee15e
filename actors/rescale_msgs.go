package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
)

// --- caller → job ---------------------------------------------------------------

// rescaleRequestMsg asks the job to rescale operators live (Job.Rescale).
type rescaleRequestMsg struct {
	priority
	targets []rescale.Target
	reply   chan rescaleReply
	// planned, when not nil, gets the plan once the rescale has started
	// (buffered: the job never waits for it).
	planned chan *rescale.Plan
}

// rescaleReply is a rescale's outcome.
type rescaleReply struct {
	result rescale.Result
	err    error
}

// --- job → task -----------------------------------------------------------------

// rescaleAddInputsMsg asks a consumer task for one input channel per added
// producer instance of its input edge edge, appended to its inputs.
type rescaleAddInputsMsg struct {
	priority
	seq       uint64 // the rescale, to name the channels
	edge      int    // index of the edge among the consumer's Inputs
	producers []int  // producer instances, in order
}

// rescaleBeginMsg gives a task its part in a rescale. outputs are, per output
// edge, the channels of the consumer instances after the rescale (only for a
// task that switches its outputs); peers are the instances of its operator by
// index (handoff targets).
type rescaleBeginMsg struct {
	priority
	cfg     rescale.TaskConfig
	next    *plan.Operator
	plan    *rescale.Plan // the rescale (next is its outcome), for tasks on other nodes
	ack     bool          // answer rescaleBegunMsg once begun (cluster)
	outputs [][]*actor.PID
	peers   []*actor.PID
}

// rescaleInjectMsg hands the rescale barrier to a source task.
type rescaleInjectMsg struct{ priority }

// rescaleFenceMsg tells the instances of a changed operator that every
// consumer has processed what instance from sent before its switch.
type rescaleFenceMsg struct {
	priority
	from int
}

// rescaleEndMsg tells every task that the rescale committed; retired are its
// inputs from removed instances, which deliver no more barriers.
type rescaleEndMsg struct {
	priority
	retired []int
}

// --- task → job -----------------------------------------------------------------

// rescaleInputsAddedMsg returns the channels a rescaleAddInputsMsg made.
type rescaleInputsAddedMsg struct {
	priority
	seq          uint64 // the rescale (one an abort left behind is ignored)
	op, instance int
	edge         int
	producers    []int
	pids         []*actor.PID
}

// rescaleDrainedMsg says a task has processed everything input's producer
// sent before its rescale barrier.
type rescaleDrainedMsg struct {
	priority
	seq          uint64
	op, instance int
	input        int
}

// rescaleTaskDoneMsg says an instance of a changed operator has done its part.
type rescaleTaskDoneMsg struct {
	priority
	seq          uint64
	op, instance int
	result       rescale.TaskResult
}

// --- producer → channel → consumer ----------------------------------------------

// rescaleBarrierMsg is the rescale barrier from a producer to a channel, behind
// the data sent before it; pending are the producer's sealed buffers still
// waiting for credit.
type rescaleBarrierMsg struct {
	lastSeq uint64
	pending []*Buffer
}

// rescaleBarrierOvertakeMsg delivers the rescale barrier ahead of queued data,
// with copies of every buffer up to lastSeq the consumer may not have
// processed.
type rescaleBarrierOvertakeMsg struct {
	priority
	input     int
	lastSeq   uint64
	overtaken []*Buffer
}

// --- old owner → new owner ------------------------------------------------------

// rescaleHandoffMsg carries key groups' state and the records set aside for
// them from their old owner to their new one.
type rescaleHandoffMsg struct {
	priority
	from    int
	groups  []int
	blobs   map[int][]byte
	records map[int][]heldBatch
	bytes   int64
}

// heldBatch is records of one input edge kept aside for a rescale.
type heldBatch struct {
	edge int
	recs plan.Batch
	at   time.Time // when the buffer they came in was delivered (zero: not known)
	// origin is that buffer's origin (Buffer.origin).
	origin time.Time
}
