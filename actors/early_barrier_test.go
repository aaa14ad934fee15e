package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestTaskForwardsBarrierThatCameBeforeItsWiring is the 30 s stall of a
// cluster recovery: a region restarted across nodes is wired and triggered
// through different stand-ins, so a restored task can get a checkpoint's
// barrier (from a source on its own node) before its wiring. It must still
// forward that barrier, first, once wired; before the fix it forwarded it to
// no output at all, acknowledged the checkpoint, and left the task downstream
// waiting for the barrier until the checkpoint timed out.
func TestTaskForwardsBarrierThatCameBeforeItsWiring(t *testing.T) {
	n := startNode(t)
	p, mid := chainPlan("early-barrier")
	j := shellJob(t, n, p, 64)
	task, parent, ready := spawnTaskUnder(t, j, mid, nil)
	root := n.system.Root

	// Checkpoint 7's barrier overtakes on the only input before any wiring:
	// the task snapshots and acknowledges at once (unaligned, one input).
	root.Send(task, &barrierOvertakeMsg{input: 0, id: 7, lastSeq: 0})
	if ack := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 7"); ack.id != 7 {
		t.Fatalf("acknowledged checkpoint %d, want 7", ack.id)
	}

	// Then the wiring comes, and data.
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	producer := spawnProbe(t, n, newProbe())
	in0 := ready.inputs[0]
	root.Send(in0, &channelWireMsg{producer: producer, output: 0, channel: 0})
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})
	root.Send(in0, &dataMsg{buf: buf(1, 1)})

	// Downstream gets barrier 7 first, at sequence 0, then the data.
	for {
		switch m := next[any](t, down, "barrier 7 forwarded downstream").(type) {
		case *dataMsg:
			t.Fatalf("data %v reached downstream before barrier 7: the early barrier was dropped", recordsOf(t, m.buf))
		case *barrierMsg:
			if m.id != 7 || !m.unaligned || m.lastSeq != 0 {
				t.Fatalf("forwarded barrier %d (unaligned %v, last seq %d), want 7 unaligned at 0", m.id, m.unaligned, m.lastSeq)
			}
			if got := collectData(t, down, 1); got[0] != 1 {
				t.Fatalf("after the barrier processed %v, want [1]", got)
			}
			return
		}
	}
}
