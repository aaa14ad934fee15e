package actors

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// retiringSink drives by hand a sink task with three inputs (a source at
// parallelism 3), wired and started; a live rescale is to retire inputs 1
// and 2.
func retiringSink(t *testing.T, name string) (func(msg any), *probe) {
	t.Helper()
	n := startNode(t)
	b := newPlan(name)
	src := b.source("src", 3, 0)
	op := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return &closingSink{}, nil })
	b.connect(src, op, plan.Rebalance)
	j := shellJob(t, n, b.job, 64)
	task, parent, ready := spawnTaskUnder(t, j, op, nil)
	if len(ready.inputs) != 3 {
		t.Fatalf("the sink has %d inputs, want 3", len(ready.inputs))
	}
	send := func(msg any) { n.system.Root.Send(task, msg) }
	send(&wireMsg{})
	send(&startMsg{})
	return send, parent
}

// TestRetiredInputsEndAfterTheCheckpointBegan: the first checkpoint after a
// live rescale is triggered as the rescale commits; in a cluster its
// barrier can reach a consumer before the commit's end message, which
// retires the inputs from removed instances. Those inputs deliver no
// barrier: the end message gives the aligner theirs for the checkpoint in
// progress, which completes. Before, it waited for them until the
// checkpoint timed out (a live rescale started then waited 30 s for it).
func TestRetiredInputsEndAfterTheCheckpointBegan(t *testing.T) {
	send, parent := retiringSink(t, "retired-late")
	send(&barrierOvertakeMsg{input: 0, id: 4, lastSeq: 0})
	send(&rescaleEndMsg{retired: []int{1, 2}})
	if m := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 4"); m.id != 4 {
		t.Fatalf("acknowledged checkpoint %d, want 4", m.id)
	}
	// The next checkpoint's barrier on input 0 is all it takes.
	send(&barrierOvertakeMsg{input: 0, id: 5, lastSeq: 0})
	if m := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 5"); m.id != 5 {
		t.Fatalf("acknowledged checkpoint %d, want 5", m.id)
	}
}

// TestRetiredInputsEndBetweenBarriers: one input's barrier came before the
// end message, another's after it; the retired input's barrier is given
// once, and the checkpoint completes with the last real barrier.
func TestRetiredInputsEndBetweenBarriers(t *testing.T) {
	send, parent := retiringSink(t, "retired-between")
	send(&barrierOvertakeMsg{input: 0, id: 6, lastSeq: 0})
	send(&rescaleEndMsg{retired: []int{2}})
	send(&barrierOvertakeMsg{input: 1, id: 6, lastSeq: 0})
	m := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 6")
	if m.id != 6 {
		t.Fatalf("acknowledged checkpoint %d, want 6", m.id)
	}
	for id := uint64(7); id <= 8; id++ {
		send(&barrierOvertakeMsg{input: 1, id: id, lastSeq: 0})
		send(&barrierOvertakeMsg{input: 0, id: id, lastSeq: 0})
		if m := next[*taskAckMsg](t, parent, fmt.Sprintf("the acknowledgement of checkpoint %d", id)); m.id != id {
			t.Fatalf("acknowledged checkpoint %d, want %d", m.id, id)
		}
	}
}
