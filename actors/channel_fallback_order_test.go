package actors

import (
	"fmt"
	"slices"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// spawnFIFOProbe starts p with protoactor's first-in, first-out mailbox.
func spawnFIFOProbe(t *testing.T, n *Node, p *probe) *actor.PID {
	t.Helper()
	pid := n.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return p }, actor.WithSupervisor(p)))
	t.Cleanup(func() { n.system.Root.Stop(pid) })
	return pid
}

// TestChannelReleasesDeferredBarrierBeforeLaterData: with two checkpoints
// in flight, barrier 1 fell back to alignment and was delivered in order,
// blocking the channel; unaligned barrier 2 (after buffer 3) arrived while
// it was blocked and waits, and buffer 4 is queued behind it. When the
// consumer unblocks the channel, barrier 2 must reach the consumer before
// buffer 4 (buffer 3, which it overtakes, may go before it): a consumer
// that processed buffer 4 first would see barrier 2 overtake data it has
// already processed (a protocol violation that failed the task). Before the
// fix the channel delivered its whole queue first.
func TestChannelReleasesDeferredBarrierBeforeLaterData(t *testing.T) {
	// The consumer's mailbox is first in, first out: it sees the messages
	// in the order the channel sent them (a task's mailbox would let the
	// barrier pass data still queued in it, not data already processed).
	n, ch, _, consumer := spawnChannelTo(t, 8, spawnFIFOProbe, func(o *Options) { o.Checkpoint.MaxConcurrent = 2 })
	root := n.system.Root
	root.Send(ch, &dataMsg{buf: buf(1, 1)})
	root.Send(ch, &dataMsg{buf: buf(2, 2)})
	root.Send(ch, &alignBarrierMsg{id: 1, lastSeq: 2})
	waitChannel(t, n, ch, "the channel blocked at barrier 1", func(c ChannelDump) bool { return c.Blocked })
	root.Send(ch, &dataMsg{buf: buf(3, 3)})
	root.Send(ch, &barrierMsg{id: 2, lastSeq: 3, unaligned: true})
	root.Send(ch, &dataMsg{buf: buf(4, 4)})
	waitChannel(t, n, ch, "buffers 3 and 4 queued", func(c ChannelDump) bool { return c.Queued == 2 })
	root.Send(ch, &unblockMsg{id: 1})

	got := sentUntil(t, consumer, "data 4")
	want := "[data 1 data 2 barrier 1 after 2 data 3 barrier 2 overtaking [1 2 3] data 4]"
	if fmt.Sprint(got) != want {
		t.Fatalf("consumer got %v, want %s", got, want)
	}
}

// TestChannelDeferredBarrierWaitsForOlderInOrderOne: blocked at barrier 1,
// the channel holds aligned barrier 2 (after buffer 2) and defers unaligned
// barrier 3 (after buffer 4, the last). Unblocked, it delivers buffer 2 and
// barrier 2 in order and blocks again: barrier 3 does not pass barrier 2;
// unblocked at barrier 2, it delivers buffers 3 and 4, then barrier 3, and
// only then the end of the stream.
func TestChannelDeferredBarrierWaitsForOlderInOrderOne(t *testing.T) {
	n, ch, _, consumer := spawnChannelTo(t, 8, spawnFIFOProbe, func(o *Options) { o.Checkpoint.MaxConcurrent = 2 })
	root := n.system.Root
	root.Send(ch, &dataMsg{buf: buf(1, 1)})
	root.Send(ch, &barrierMsg{id: 1, lastSeq: 1})
	waitChannel(t, n, ch, "the channel blocked at barrier 1", func(c ChannelDump) bool { return c.Blocked })
	root.Send(ch, &dataMsg{buf: buf(2, 2)})
	root.Send(ch, &barrierMsg{id: 2, lastSeq: 2})
	root.Send(ch, &dataMsg{buf: buf(3, 3)})
	root.Send(ch, &dataMsg{buf: buf(4, 4)})
	root.Send(ch, &barrierMsg{id: 3, lastSeq: 4, unaligned: true})
	root.Send(ch, &eosMsg{lastSeq: 4})
	waitChannel(t, n, ch, "buffers 2 to 4 queued", func(c ChannelDump) bool { return c.Queued == 3 })
	root.Send(ch, &unblockMsg{id: 1})
	got := sentUntil(t, consumer, "barrier 2 after 2")
	waitChannel(t, n, ch, "the channel blocked at barrier 2", func(c ChannelDump) bool { return c.Blocked })
	root.Send(ch, &unblockMsg{id: 2})
	got = append(got, sentUntil(t, consumer, "eos")...)
	want := "[data 1 barrier 1 after 1 data 2 barrier 2 after 2 data 3 data 4 barrier 3 overtaking [1 2 3 4] eos]"
	if fmt.Sprint(got) != want {
		t.Fatalf("consumer got %v, want %s", got, want)
	}
}

// sentUntil reads what the channel sent a first-in, first-out consumer
// probe, in order, up to and including last.
func sentUntil(t *testing.T, consumer *probe, last string) []string {
	t.Helper()
	var got []string
	for !slices.Contains(got, last) {
		switch m := next[any](t, consumer, last).(type) {
		case *deliverMsg:
			got = append(got, fmt.Sprintf("data %d", m.buf.Seq))
		case *barrierInOrderMsg:
			got = append(got, fmt.Sprintf("barrier %d after %d", m.id, m.lastSeq))
		case *barrierOvertakeMsg:
			got = append(got, fmt.Sprintf("barrier %d overtaking %v", m.id, seqs(m.overtaken)))
		case *deliverEOSMsg:
			got = append(got, "eos")
		}
	}
	return got
}
