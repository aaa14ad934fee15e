package actors

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
)

// spawnChannel starts a real channel actor between a producer probe and a
// consumer probe, with a delivery window of window buffers and the job's
// options changed by with.
func spawnChannel(t *testing.T, window int, with ...func(*Options)) (n *Node, ch *actor.PID, producer, consumer *probe) {
	return spawnChannelTo(t, window, spawnProbe, with...)
}

// spawnChannelTo is spawnChannel whose consumer probe is spawned by
// spawnConsumer.
func spawnChannelTo(t *testing.T, window int, spawnConsumer func(*testing.T, *Node, *probe) *actor.PID, with ...func(*Options)) (n *Node, ch *actor.PID, producer, consumer *probe) {
	t.Helper()
	n = startNode(t)
	p, _ := chainPlan("channel")
	j := shellJob(t, n, p, 8)
	j.opts.DeliveryWindow = window
	for _, f := range with {
		f(&j.opts)
	}
	producer, consumer = newProbe(), newProbe()
	prodPID, consPID := spawnProbe(t, n, producer), spawnConsumer(t, n, consumer)
	props := actor.PropsFromProducer(func() actor.Actor { return newChannel(j, "src[0]→mid[0]", consPID, 0) },
		actor.WithMailbox(mailbox.New()), actor.WithDispatcher(n.dispatcher))
	ch = n.system.Root.Spawn(props)
	t.Cleanup(func() { n.system.Root.Stop(ch) })
	n.system.Root.Send(ch, &channelWireMsg{producer: prodPID, output: 0, channel: 0})
	return n, ch, producer, consumer
}

// consumerView is what a consumer probe got: the normal-lane messages in
// order (deliveries, in-order barriers, end of stream) and the overtaking
// barriers.
type consumerView struct {
	inOrder  []string
	overtook []*barrierOvertakeMsg
}

// until reads messages from the consumer until cond holds.
func (v *consumerView) until(t *testing.T, consumer *probe, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		switch m := next[any](t, consumer, what).(type) {
		case *deliverMsg:
			v.inOrder = append(v.inOrder, fmt.Sprintf("data %d", m.buf.Seq))
		case *barrierInOrderMsg:
			v.inOrder = append(v.inOrder, fmt.Sprintf("barrier %d after %d", m.id, m.lastSeq))
		case *deliverEOSMsg:
			v.inOrder = append(v.inOrder, "eos")
		case *barrierOvertakeMsg:
			v.overtook = append(v.overtook, m)
		}
	}
}

// take reads messages from the consumer until it has n in-order ones.
func (v *consumerView) take(t *testing.T, consumer *probe, n int) {
	t.Helper()
	v.until(t, consumer, fmt.Sprintf("in-order message %d", n), func() bool { return len(v.inOrder) >= n })
}

// seqs lists the seqs of buffers.
func seqs(bufs []*Buffer) []uint64 {
	var s []uint64
	for _, b := range bufs {
		s = append(s, b.Seq)
	}
	return s
}

// TestChannelOvertakingBarrierPassesHeldInOrderBarrier: an in-order barrier
// waits in the channel behind queued data (its checkpoint then aborted by the
// consumer); a newer unaligned barrier overtakes it and the data at once,
// carrying copies of every buffer before it that the consumer has not
// acknowledged: delivered, queued, or still held by the producer. The held
// barrier is still delivered in order, blocks the channel, and an unblock
// releases the data after it.
func TestChannelOvertakingBarrierPassesHeldInOrderBarrier(t *testing.T) {
	n, ch, producer, consumer := spawnChannel(t, 1)
	root := n.system.Root
	for s := uint64(1); s <= 3; s++ {
		root.Send(ch, &dataMsg{buf: buf(s, int64(s))})
	}
	root.Send(ch, &barrierMsg{id: 5, lastSeq: 3})
	// Barrier 6 comes with buffer 4, which the producer sealed before it and
	// still holds for want of credit.
	root.Send(ch, &barrierMsg{id: 6, lastSeq: 4, unaligned: true, pending: []*Buffer{buf(4, 4)}})

	var v consumerView
	v.until(t, consumer, "the overtaking barrier", func() bool { return len(v.overtook) > 0 })
	if len(v.inOrder) > 1 {
		t.Fatalf("delivered %v with a window of one buffer and nothing acknowledged", v.inOrder)
	}
	o := v.overtook[0]
	if o.id != 6 || o.lastSeq != 4 || fmt.Sprint(seqs(o.overtaken)) != "[1 2 3 4]" {
		t.Fatalf("overtaking barrier %d after %d with %v, want 6 after 4 with [1 2 3 4]", o.id, o.lastSeq, seqs(o.overtaken))
	}
	root.Send(ch, &dataMsg{buf: buf(4, 4)})
	for s := uint64(1); s <= 3; s++ {
		root.Send(ch, &ackMsg{seq: s})
	}
	v.take(t, consumer, 4)
	if d := waitChannel(t, n, ch, "the channel blocked at barrier 5", func(c ChannelDump) bool { return c.Blocked }); d.Queued != 1 {
		t.Fatalf("blocked channel %+v, want buffer 4 queued", d)
	}
	root.Send(ch, &unblockMsg{id: 5})
	v.take(t, consumer, 5)
	if got, want := fmt.Sprint(v.inOrder), "[data 1 data 2 data 3 barrier 5 after 3 data 4]"; got != want {
		t.Fatalf("consumer got %s, want %s", got, want)
	}
	credit := 0
	for credit < 3 {
		credit += next[*creditMsg](t, producer, "credit for the acknowledged buffers").n
	}
	if credit != 3 {
		t.Fatalf("producer got %d credits for 3 acknowledged buffers", credit)
	}
}

// TestChannelSwitchToUnalignedDeliversHeldBarrierAtOnce: a timed-out
// alignment switches an in-order barrier still waiting behind data to
// overtaking; later barriers up to that id overtake too.
func TestChannelSwitchToUnalignedDeliversHeldBarrierAtOnce(t *testing.T) {
	n, ch, _, consumer := spawnChannel(t, 1)
	root := n.system.Root
	root.Send(ch, &dataMsg{buf: buf(1, 1)})
	root.Send(ch, &dataMsg{buf: buf(2, 2)})
	root.Send(ch, &barrierMsg{id: 8, lastSeq: 2})
	waitChannel(t, n, ch, "barrier 8 held", func(c ChannelDump) bool { return len(c.Barriers) == 1 })
	root.Send(ch, &switchUnalignedMsg{id: 8})
	var v consumerView
	v.until(t, consumer, "the switched barrier", func() bool { return len(v.overtook) > 0 })
	if len(v.inOrder) > 1 {
		t.Fatalf("in order before the switch: %v, want only data 1", v.inOrder)
	}
	if o := v.overtook[0]; o.id != 8 || fmt.Sprint(seqs(o.overtaken)) != "[1 2]" {
		t.Fatalf("switched barrier %d with %v, want 8 with [1 2]", o.id, seqs(o.overtaken))
	}
	if d := dumpChannel(t, n, ch); len(d.Barriers) != 0 || d.Blocked {
		t.Fatalf("after the switch the channel is %+v, want no held barrier and not blocked", d)
	}
}
