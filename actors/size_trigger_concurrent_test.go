package actors

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/internal/poll"
)

// dumpTask asks a task actor for its state.
func dumpTask(t *testing.T, n *Node, pid *actor.PID) TaskDump {
	t.Helper()
	return ask(t, n, pid, func(reply chan TaskDump) any { return &dumpTaskMsg{reply: reply} })
}

// waitTaskQuiet polls a task until its mailbox is empty and it took at least
// records records: it has done all the work it may do with what it was given.
func waitTaskQuiet(t *testing.T, n *Node, pid *actor.PID, records int64) TaskDump {
	t.Helper()
	var d TaskDump
	if !poll.Until(shellDeadline, poll.Every, func() bool {
		d = dumpTask(t, n, pid)
		return d.RecordsIn >= records && d.Mailbox == (mailbox.Lengths{})
	}) {
		t.Fatalf("task did not settle with %d records in: %+v", records, d)
	}
	return d
}

// TestTaskHoldsInputForNewerFallenBackBarrier is the protocol violation of an
// unaligned job with a size limit and two checkpoints in flight. On input 0
// barrier 5 falls back to alignment (its overtaken data is over the limit),
// then barrier 6 overtakes on the same input, which supersedes 5, and falls
// back too: the input must hold its data after 6's last seq (4) until 6
// comes again in order. Barrier 5, sent back earlier, then arrives in order
// and is ignored; releasing its input must not release the hold of 6: buffer
// 5 waits, and barrier 6 in order finds exactly buffers 1..4 processed.
func TestTaskHoldsInputForNewerFallenBackBarrier(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("hold-newer-fallback")
	j := shellJob(t, n, p, 64)
	j.opts.Checkpoint.MaxConcurrent = 2
	j.opts.Checkpoint.MaxInflightBytes = 1 // any unprocessed overtaken data is over it
	task, parent, _ := spawnTaskUnder(t, j, mid, nil)
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root := n.system.Root
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})

	b := func(seq uint64) *Buffer { return buf(seq, int64(seq)) }
	root.Send(task, &barrierOvertakeMsg{input: 0, id: 5, lastSeq: 2, overtaken: []*Buffer{b(1), b(2)}})
	root.Send(task, &barrierOvertakeMsg{input: 0, id: 6, lastSeq: 4, overtaken: []*Buffer{b(1), b(2), b(3), b(4)}})
	root.Send(task, &barrierInOrderMsg{input: 0, id: 5, lastSeq: 2})
	for seq := uint64(1); seq <= 5; seq++ {
		root.Send(task, &deliverMsg{input: 0, buf: b(seq)})
	}
	if got := collectData(t, down, 4); fmt.Sprint(got) != "[1 2 3 4]" {
		t.Fatalf("processed %v, want [1 2 3 4]", got)
	}
	if d := waitTaskQuiet(t, n, task, 4); d.RecordsIn != 4 || d.Inputs[0].Pending != 1 {
		t.Fatalf("task went past barrier 6's last seq 4 before the barrier: %d records in, %d pending on input 0", d.RecordsIn, d.Inputs[0].Pending)
	}
	// Barrier 6 again, in order on input 0: the input over the limit is
	// aligned, so the task snapshots and switches 6 to unaligned; on input 1
	// it then overtakes nothing and completes 6 with no channel state.
	root.Send(task, &barrierInOrderMsg{input: 0, id: 6, lastSeq: 4})
	root.Send(task, &barrierOvertakeMsg{input: 1, id: 6, lastSeq: 0})
	ack := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 6")
	if ack.id != 6 || ack.buffers != 0 {
		t.Fatalf("acknowledged checkpoint %d with %d buffers of channel state, want 6 with none", ack.id, ack.buffers)
	}
	if got := collectData(t, down, 1); fmt.Sprint(got) != "[5]" {
		t.Fatalf("after checkpoint 6 processed %v, want [5]", got)
	}
}
