package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// gatedIdentity passes records through; on value gateAt it signals entered
// and waits for gate, holding the task's goroutine in Process.
type gatedIdentity struct {
	gateAt  int64
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedIdentity) Open(plan.TaskInfo) error { return nil }
func (g *gatedIdentity) Close() error             { return nil }
func (g *gatedIdentity) Finish(plan.Output) error { return nil }
func (g *gatedIdentity) Process(_ int, recs plan.Batch, out plan.Output) error {
	vs, _ := plan.RecordsOf[int64](recs)
	for _, v := range vs {
		if v == g.gateAt {
			close(g.entered)
			<-g.gate
		}
		emit(out, v)
	}
	return nil
}

// TestTaskHandsInOrderBarrierOverAfterReplay is the stall of an unaligned
// job's final checkpoint after a restart: an input's in-order barrier, with
// no new data before it, arrives while that input's restored channel state
// is still being replayed. Once the replay is done the barrier must reach the
// aligner: the task forwards it after every replayed record, in order, and
// acknowledges the checkpoint. Deterministic: the operator holds the task in
// its first replayed record while the barrier is queued, so the barrier is
// handled with more than a pump's budget still to replay.
func TestTaskHandsInOrderBarrierOverAfterReplay(t *testing.T) {
	n := startNode(t)
	p, mid := chainPlan("replay-barrier")
	gi := &gatedIdentity{gateAt: 100, entered: make(chan struct{}), gate: make(chan struct{})}
	mid.New = func(int) (plan.Instance, error) { return gi, nil }
	j := shellJob(t, n, p, 64)
	var replay []int64
	for v := int64(100); v < 100+pumpBudget+4; v++ {
		replay = append(replay, v)
	}
	task, parent, _ := spawnTaskUnder(t, j, mid, channelStateManifest(t, j, mid, 3, replay))

	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root := n.system.Root
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})
	waitClosed(t, gi.entered, "the first replayed record")
	// The final checkpoint's barrier, in order with no new data before it.
	root.Send(task, &barrierInOrderMsg{input: 0, id: 4, lastSeq: 0})
	close(gi.gate)

	var got []int64
	for {
		m := next[any](t, down, "the replay and the forwarded barrier")
		if d, ok := m.(*dataMsg); ok {
			got = append(got, recordsOf(t, d.buf)...)
			continue
		}
		b, ok := m.(*barrierMsg)
		if !ok {
			continue
		}
		if b.id != 4 || b.unaligned {
			t.Fatalf("forwarded barrier %d (unaligned %v), want 4 in order", b.id, b.unaligned)
		}
		break
	}
	if len(got) != len(replay) {
		t.Fatalf("barrier forwarded after %v, want after the whole replay %v", got, replay)
	}
	for i := range replay {
		if got[i] != replay[i] {
			t.Fatalf("replayed %v, want %v in order", got, replay)
		}
	}
	if ack := next[*taskAckMsg](t, parent, "the checkpoint's acknowledgement"); ack.id != 4 {
		t.Fatalf("acknowledged checkpoint %d, want 4", ack.id)
	}
}
