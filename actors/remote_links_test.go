package actors

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/testseed"
	"github.com/weirstream/weir/transport"
)

// linkStep is one scripted arrival at a receiver: register bumps the
// receiver's registration epoch first (a restarted channel or task).
type linkStep struct {
	register bool
	gen      int
	seq      uint64
	want     transport.Verdict
}

// TestRecvLinksScripts scripts arrivals on one link into a receiver that
// may be registered again and whose sender may move the link to a new gen.
func TestRecvLinksScripts(t *testing.T) {
	in, dup, gap, stale := transport.InOrder, transport.Duplicate, transport.Gap, transport.Stale
	scripts := []struct {
		name     string
		restored bool // the receiver is restored from a checkpoint
		steps    []linkStep
	}{
		{"one gen, first registration", false, []linkStep{
			{true, 1, 1, in}, {false, 1, 2, in}, {false, 1, 2, dup}, {false, 1, 4, gap}, {false, 1, 5, gap},
		}},
		{"a new job's first message lost", false, []linkStep{{true, 1, 2, gap}}},
		// The CI's first restart: a node restarted, its restored channel
		// registered for the first time there; seq 1 was sent by the old
		// region before the channel subscribed. The first message it sees
		// starts the link.
		{"restored at its first registration", true, []linkStep{
			{true, 2, 2, in}, {false, 2, 3, in}, {false, 2, 5, gap}, {false, 1, 9, stale}, {true, 2, 9, in},
		}},
		// The CI hang: a channel restarted with its region takes the
		// link's next message (seq 7) as its start; then its sender
		// moves the link to a new gen (the sender's node saw the
		// receiver's node join), restarting at 1. That seq 1 is the
		// link's next message, not an old one.
		{"registered again, then the sender moves to a new gen", false, []linkStep{
			{true, 1, 1, in}, {false, 1, 2, in}, {true, 1, 7, in}, {false, 1, 8, in},
			{false, 2, 1, in}, {false, 2, 2, in}, {false, 1, 9, stale}, {false, 2, 2, dup},
		}},
		{"a new gen must start at 1 after a baseline", false, []linkStep{
			{true, 1, 1, in}, {true, 1, 7, in}, {false, 2, 3, gap}, {false, 2, 4, gap},
		}},
		{"registered again after a gen move", false, []linkStep{
			{true, 1, 1, in}, {false, 2, 1, in}, {false, 2, 2, in}, {true, 2, 5, in}, {false, 2, 6, in},
			{false, 1, 3, stale}, {false, 3, 1, in},
		}},
		{"lower gen after a baseline is stale", false, []linkStep{
			{true, 1, 1, in}, {true, 2, 4, in}, {false, 1, 9, stale}, {false, 2, 5, in},
		}},
		{"a loss before a gen move is a gap until then", false, []linkStep{
			{true, 1, 1, in}, {true, 1, 3, in}, {false, 1, 5, gap}, {false, 1, 6, gap}, {false, 2, 1, in},
		}},
	}
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			c := newRecvLinks()
			epoch := 0
			for i, s := range sc.steps {
				if s.register {
					epoch++
				}
				if got := c.check("a/x→y", epoch, sc.restored, s.gen, s.seq); got != s.want {
					t.Fatalf("step %d (epoch %d, gen %d, seq %d): %v, want %v", i, epoch, s.gen, s.seq, got, s.want)
				}
			}
		})
	}
}

// TestRecvLinksRandom runs one sender and one receiver over a FIFO link:
// the sender sometimes loses a message (never delivered) or moves the link
// to a new gen (restarting at 1); the receiver is sometimes registered
// again. A message delivered in order is never dropped (the hang: dropped
// as stale, never resent), and a loss is a Gap until the link restarts (a
// new gen, or the receiver's next registration takes the next message as
// the start).
func TestRecvLinksRandom(t *testing.T) {
	testseed.Run(t, 200, 20, func(seed uint64) {
		if err := recvLinksRun(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	})
}

func recvLinksRun(seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := newRecvLinks()
	var stamper transport.SeqStamper
	gen, epoch := 1, 1
	restored := seed%2 == 1 // the receiver is restored from a checkpoint
	lost := false           // a message of the current gen was lost since the link's (re)start
	started := !restored    // the link has started in this epoch (a fresh receiver's first registration starts at seq 1)
	for i := range 2000 {
		switch r := rng.IntN(100); {
		case r < 3:
			gen++
			lost = false
		case r < 6:
			epoch++
			lost, started = false, false
		case r < 10:
			stamper.NextGen("link", gen) // lost on the wire
			lost = started               // before the link's start in this epoch, nothing is missed
		default:
			seq := stamper.NextGen("link", gen)
			want := transport.InOrder
			if lost {
				want = transport.Gap
			}
			if got := c.check("link", epoch, restored, gen, seq); got != want {
				return fmt.Errorf("step %d (epoch %d, gen %d, seq %d): %v, want %v", i, epoch, gen, seq, got, want)
			}
			started = true
			if gen > 1 {
				// A leftover of the previous gen, arriving late, is stale.
				if got := c.check("link", epoch, restored, gen-1, seq); got != transport.Stale {
					return fmt.Errorf("step %d: a message of gen %d after gen %d: %v, want stale", i, gen-1, gen, got)
				}
			}
		}
	}
	return nil
}

// TestDispatchAcceptsANewGenAfterARestartedReceiver: the CI hang at the
// dispatch level, on a node linked to a real NATS server. A channel
// registered again takes the link's next message (seq 7) as its start; when
// the sender then moves the link to a new gen, which restarts it at 1,
// those messages are delivered, not dropped as stale (nothing would ever
// resend them and the job would wait forever).
func TestDispatchAcceptsANewGenAfterARestartedReceiver(t *testing.T) {
	dispatchScript(t, func(r *Remote, pid *actor.PID, ref WireRef) {
		r.register(pid, ref)
		r.register(pid, ref) // the channel restarted with its region
	}, []scriptedBuffer{{1, 7, 70}, {1, 8, 80}, {2, 1, 1}, {2, 2, 2}})
}

// TestDispatchStartsARestoredReceiverAnywhere: a channel restored from a
// checkpoint on a node that restarted is registered there for the first
// time; the message its sender sent before it subscribed (seq 1, of the
// region's old incarnation) is gone, and the link's first message it sees
// (seq 2) starts the link instead of failing it as a gap, which restarted
// the region a second time.
func TestDispatchStartsARestoredReceiverAnywhere(t *testing.T) {
	dispatchScript(t, func(r *Remote, pid *actor.PID, ref WireRef) {
		r.registerRestored(pid, ref)
	}, []scriptedBuffer{{5, 2, 20}, {5, 3, 30}})
}

// scriptedBuffer is one data message of a dispatch script: delivered in
// order, each one expected at the channel.
type scriptedBuffer struct {
	gen int
	seq uint64
	v   int64
}

// dispatchScript registers a channel on a node linked to a real NATS
// server (as register does), dispatches the script's messages to it and
// expects each delivered, with no message counted out of sequence.
func dispatchScript(t *testing.T, register func(r *Remote, pid *actor.PID, ref WireRef), script []scriptedBuffer) {
	t.Helper()
	url := startNATS(t)
	n, counters := clusterNode(t, url, "b")
	r := n.remote
	got := make(chan *Buffer, 8)
	pid := n.system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*dataMsg); ok {
			got <- m.buf
		}
	}))
	register(r, pid, WireRef{Node: "b", ID: pid.Id, Kind: refChannel})
	b := newPlan("regen")
	src := b.source("source", 1, 1)
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	b.connect(src, sink, plan.Forward).Codec = int64Codec{}
	r.addJob(&Job{Plan: b.job})

	buffer := func(gen int, seq uint64, v int64) *transport.Envelope {
		t.Helper()
		raw, err := msgpack.Marshal([]int64{v})
		if err != nil {
			t.Fatal(err)
		}
		p, err := msgpack.Marshal(&wireBody{K: kData, Seq: seq, Records: raw})
		if err != nil {
			t.Fatal(err)
		}
		return &transport.Envelope{Type: transport.TypeBuffer, Job: "regen", From: "a/remote/b/" + pid.Id + "#data",
			To: pid.Id, Gen: gen, Seq: seq, Payload: p}
	}
	const subject = "weir.regen.data.0.0.0"
	for _, s := range script {
		r.dispatch("regen", subject, buffer(s.gen, s.seq, s.v))
		select {
		case buf := <-got:
			recs, ok := plan.RecordsOf[int64](buf.Records)
			if !ok || len(recs) != 1 || recs[0] != s.v {
				t.Fatalf("gen %d seq %d: delivered %v, want [%d]", s.gen, s.seq, buf.Records, s.v)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("gen %d seq %d: not delivered (counters %+v)", s.gen, s.seq, counters.Snapshot())
		}
	}
	if v := counters.Snapshot(); v.BadSeq != 0 {
		t.Fatalf("counters %+v: no message was out of sequence", v)
	}
}

// TestNodeJoinedMovesLinksOnlyWhenANodeReturns: the first time a node is
// seen joining, links to it keep their generation (this node may already be
// sending to it); each later join (back after being declared dead, or a new
// incarnation) moves them to a new, higher one.
func TestNodeJoinedMovesLinksOnlyWhenANodeReturns(t *testing.T) {
	r := NewRemote("a", nil, &transport.Counters{}, zerolog.Nop())
	const gen = 5
	if g := r.linkGen("b", gen); g != gen {
		t.Fatalf("before b joined: gen %d, want the sender's %d", g, gen)
	}
	r.NodeJoined("b")
	if g := r.linkGen("b", gen); g != gen {
		t.Fatalf("b seen joining the first time: gen %d, want the sender's %d kept", g, gen)
	}
	r.NodeLost("b")
	r.NodeJoined("b")
	back := r.linkGen("b", gen)
	if back <= gen {
		t.Fatalf("b back: gen %d, want above the sender's %d", back, gen)
	}
	if r.isLost("b") {
		t.Fatal("b back: still marked lost")
	}
	r.NodeJoined("b")
	if again := r.linkGen("b", gen); again <= back {
		t.Fatalf("b joined again: gen %d, want above %d", again, back)
	}
}

// TestDispatchResumesAJobLevelLinkAfterAGap: a message to a job-level
// receiver (a node's part of a job, or the coordinator) is lost, as when a
// node's connection to NATS drops and comes back. The receiver is told once
// (linkFailedMsg: its tasks restart) and the link resumes at the message
// after the gap, which is delivered, as are the ones after it. Such a
// receiver is not restarted by the recovery; before, every later message on
// the link was a gap too and failed the tasks again, until the job failed.
func TestDispatchResumesAJobLevelLinkAfterAGap(t *testing.T) {
	url := startNATS(t)
	n, counters := clusterNode(t, url, "b")
	r := n.remote
	got := make(chan string, 16)
	pid := n.system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *creditMsg:
			got <- fmt.Sprintf("credit %d", m.n)
		case *linkFailedMsg:
			got <- "link failed"
		}
	}))
	r.register(pid, WireRef{Node: "b", ID: pid.Id, Kind: refJob})
	b := newPlan("gap")
	src := b.source("source", 1, 1)
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	b.connect(src, sink, plan.Forward).Codec = int64Codec{}
	r.addJob(&Job{Plan: b.job})
	send := func(seq uint64) {
		t.Helper()
		p, err := msgpack.Marshal(&wireBody{K: kCredit, N: int(seq)})
		if err != nil {
			t.Fatal(err)
		}
		r.dispatch("gap", "weir.gap.ctl.b", &transport.Envelope{Type: transport.TypeControl, Job: "gap", From: "a/node/job-gap>b#ctl",
			To: pid.Id, Seq: seq, Payload: p})
	}
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case g := <-got:
				if g != w {
					t.Fatalf("receiver got %q, want %q", g, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("receiver got nothing, want %q", w)
			}
		}
	}
	send(1)
	expect("credit 1")
	send(3) // 2 was lost
	expect("link failed", "credit 3")
	send(4)
	send(5)
	expect("credit 4", "credit 5")
	send(3) // a late duplicate
	send(6)
	expect("credit 6")
	if v := counters.Snapshot(); v.BadSeq != 2 {
		t.Fatalf("counters %+v: want the gap and the duplicate counted", v)
	}
}

// TestReconnectedFailsEverySubscriber: after the node's connection to NATS
// dropped and came back, every actor fed by a subscription is told a link
// failed (once, even if it owns several subscriptions), so its job
// recovers instead of waiting for a message lost meanwhile.
func TestReconnectedFailsEverySubscriber(t *testing.T) {
	url := startNATS(t)
	n, _ := clusterNode(t, url, "b")
	r := n.remote
	got := make(chan string, 8)
	spawn := func(name string) *actor.PID {
		return n.system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*linkFailedMsg); ok {
				got <- name
			}
		}))
	}
	part, task := spawn("part"), spawn("task")
	for subject, owner := range map[string]*actor.PID{"weir.j.ctl.b": part, "weir.j.data.0.0.0": task, "weir.j.data.0.1.0": task} {
		unsub, err := r.listen("j", subject, owner)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(unsub)
	}
	r.Reconnected()
	seen := map[string]int{}
	for range 2 {
		select {
		case name := <-got:
			seen[name]++
		case <-time.After(10 * time.Second):
			t.Fatalf("told so far %v, want the part and the task", seen)
		}
	}
	select {
	case name := <-got:
		t.Fatalf("%s told twice (%v)", name, seen)
	case <-time.After(100 * time.Millisecond):
	}
	if seen["part"] != 1 || seen["task"] != 1 {
		t.Fatalf("told %v, want the part and the task once each", seen)
	}
}
