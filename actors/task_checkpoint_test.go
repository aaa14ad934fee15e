package actors

import (
	"fmt"
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

// TestTaskCapturesExactlyTheBuffersBetweenSnapshotAndBarrier checks an
// unaligned checkpoint's capture bounds on a task with two inputs. Input 0's
// barrier overtakes buffers 3 and 4 (its channel has not delivered them):
// they are captured from the barrier's copies, and not again when they are
// processed afterwards. Input 1's buffers 2 and 3, processed after the
// snapshot and before its barrier, are captured; buffers processed before
// the snapshot or after the barrier are not.
func TestTaskCapturesExactlyTheBuffersBetweenSnapshotAndBarrier(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("capture-bounds")
	j := shellJob(t, n, p, 64)
	task, parent, _ := spawnTaskUnder(t, j, mid, nil)
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root := n.system.Root
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})

	// Before the snapshot: processed, never captured.
	root.Send(task, &deliverMsg{input: 0, buf: buf(1, 1)})
	root.Send(task, &deliverMsg{input: 0, buf: buf(2, 2)})
	root.Send(task, &deliverMsg{input: 1, buf: buf(1, 101)})
	collectData(t, down, 3)

	// Input 0's barrier overtakes 3 and 4 and triggers the snapshot.
	root.Send(task, &barrierOvertakeMsg{input: 0, id: 9, lastSeq: 4, overtaken: []*Buffer{buf(3, 3), buf(4, 4)}})
	// The channel then delivers 3 and 4 (already captured), and input 1
	// brings 102 and 103 before its barrier.
	root.Send(task, &deliverMsg{input: 0, buf: buf(3, 3)})
	root.Send(task, &deliverMsg{input: 0, buf: buf(4, 4)})
	root.Send(task, &deliverMsg{input: 1, buf: buf(2, 102)})
	root.Send(task, &deliverMsg{input: 1, buf: buf(3, 103)})
	collectData(t, down, 4)
	// Input 1's barrier, with nothing left to overtake, completes it.
	root.Send(task, &barrierOvertakeMsg{input: 1, id: 9, lastSeq: 3})
	// After the barrier: not captured.
	root.Send(task, &deliverMsg{input: 1, buf: buf(4, 104)})
	collectData(t, down, 1)

	ack := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 9")
	if ack.id != 9 || !ack.unaligned {
		t.Fatalf("acknowledged checkpoint %d (unaligned %v), want 9 unaligned", ack.id, ack.unaligned)
	}
	got := capturedState(t, j, mid, ack)
	want := map[int][]int64{0: {3, 4}, 1: {102, 103}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("captured channel state %v, want %v", got, want)
	}
	if ack.buffers != 4 {
		t.Fatalf("acknowledged %d captured buffers, want 4", ack.buffers)
	}
}

// TestTaskReplaysRestoredChannelStateFirstInOrder restores channel state on
// two inputs while new buffers already wait on both: on each input every
// restored buffer is processed before any new one, in the original order.
func TestTaskReplaysRestoredChannelStateFirstInOrder(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("replay-order")
	j := shellJob(t, n, p, 64)
	restored := map[int][]int64{0: {10, 11, 12, 13}, 1: {20, 21}}
	task, _, _ := spawnTaskUnder(t, j, mid, channelsStateManifest(t, j, mid, 7, restored))
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root := n.system.Root
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	// New input is queued before the task starts processing.
	root.Send(task, &deliverMsg{input: 0, buf: buf(1, 14)})
	root.Send(task, &deliverMsg{input: 1, buf: buf(1, 22)})
	root.Send(task, &deliverMsg{input: 1, buf: buf(2, 23)})
	root.Send(task, &startMsg{})

	got := collectData(t, down, 9)
	perInput := map[int][]int64{}
	for _, v := range got {
		perInput[int(v/10)-1] = append(perInput[int(v/10)-1], v)
	}
	want := map[int][]int64{0: {10, 11, 12, 13, 14}, 1: {20, 21, 22, 23}}
	if fmt.Sprint(perInput) != fmt.Sprint(want) {
		t.Fatalf("processed %v, per input %v, want %v", got, perInput, want)
	}
}

// TestTaskIgnoresHeldBarrierOfAbortedCheckpoint: an in-order barrier of
// checkpoint 5 waits in the task behind input 0's unprocessed buffer when 5
// is aborted and checkpoint 6's barrier overtakes it. Checkpoint 6 captures
// the overtaken buffer once; the held barrier 5, reached later, is ignored and
// releases its channel, which then delivers new data.
func TestTaskIgnoresHeldBarrierOfAbortedCheckpoint(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("held-aborted")
	gi := &gatedIdentity{gateAt: 1, entered: make(chan struct{}), gate: make(chan struct{})}
	mid.New = func(int) (plan.Instance, error) { return gi, nil }
	j := shellJob(t, n, p, 64)
	j.opts.DeliveryWindow = 2
	task, parent, ready := spawnTaskUnder(t, j, mid, nil)
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	producer := spawnProbe(t, n, newProbe())
	root := n.system.Root
	in0 := ready.inputs[0]
	root.Send(in0, &channelWireMsg{producer: producer, output: 0, channel: 0})
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})

	// Input 0's channel delivers 1 and 2, then barrier 5 in order, and blocks.
	root.Send(in0, &dataMsg{buf: buf(1, 1)})
	root.Send(in0, &dataMsg{buf: buf(2, 2)})
	root.Send(in0, &barrierMsg{id: 5, lastSeq: 2})
	waitClosed(t, gi.entered, "the task processing buffer 1")
	waitChannel(t, n, in0, "input 0 blocked at barrier 5", func(c ChannelDump) bool { return c.Blocked })
	// While the task is busy with 1: checkpoint 5 is aborted and 6 overtakes
	// on input 0 (its copies: 1 and 2, not yet acknowledged).
	root.Send(task, &checkpointAbortMsg{id: 5})
	root.Send(in0, &barrierMsg{id: 6, lastSeq: 2, unaligned: true})
	// The dump overtakes queued data and barriers: an empty normal lane says
	// barrier 6 was handled.
	waitChannel(t, n, in0, "barrier 6 to overtake", func(c ChannelDump) bool { return c.Mailbox.Normal == 0 })
	close(gi.gate)
	if got := collectData(t, down, 2); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("processed %v, want [1 2]", got)
	}
	// Input 1's barrier completes checkpoint 6.
	root.Send(task, &barrierOvertakeMsg{input: 1, id: 6, lastSeq: 0})
	ack := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 6")
	if ack.id != 6 {
		t.Fatalf("acknowledged checkpoint %d, want 6", ack.id)
	}
	if got := capturedState(t, j, mid, ack); fmt.Sprint(got) != "map[0:[2]]" {
		t.Fatalf("checkpoint 6 captured %v, want buffer 2 of input 0 once", got)
	}
	// The held barrier 5 was ignored and released input 0: new data flows.
	root.Send(in0, &dataMsg{buf: buf(3, 3)})
	if got := collectData(t, down, 1); got[0] != 3 {
		t.Fatalf("after the ignored barrier processed %v, want [3]", got)
	}
}
