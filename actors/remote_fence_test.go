package actors

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/transport"
)

// testFence is a cluster.Fence behind a lock, as a node's agent keeps it.
type testFence struct {
	mu sync.Mutex
	f  *cluster.Fence
}

func (t *testFence) Admit(job string, epoch uint64) (bool, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.f.Admit(job, epoch)
}

// TestDispatchFencesAReplacedCoordinator: a node delivers a job's messages
// of the highest coordinator epoch it has seen and refuses those of a lower
// one (a coordinator that was replaced, or a part it started) without using
// their sequence numbers; a message of a higher epoch raises the fence.
func TestDispatchFencesAReplacedCoordinator(t *testing.T) {
	url := startNATS(t)
	n, counters := clusterNode(t, url, "b")
	r := n.remote
	r.SetFence(&testFence{f: cluster.NewFence()})
	got := make(chan *Buffer, 8)
	pid := n.system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*dataMsg); ok {
			got <- m.buf
		}
	}))
	r.register(pid, WireRef{Node: "b", ID: pid.Id, Kind: refChannel, Edge: 0, From: 0, To: 0})
	b := newPlan("fenced")
	src := b.source("source", 1, 1)
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	b.connect(src, sink, plan.Forward).Codec = int64Codec{}
	r.addJob(&Job{Plan: b.job, opts: Options{Cluster: &ClusterOptions{Epoch: 2}}})

	buffer := func(seq, epoch uint64, v int64) *transport.Envelope {
		t.Helper()
		raw, err := msgpack.Marshal([]int64{v})
		if err != nil {
			t.Fatal(err)
		}
		p, err := msgpack.Marshal(&wireBody{K: kData, Seq: seq, Records: raw, Epoch: epoch})
		if err != nil {
			t.Fatal(err)
		}
		return &transport.Envelope{Type: transport.TypeBuffer, Job: "fenced", From: "a/x", To: pid.Id, Seq: seq, Payload: p}
	}
	expect := func(what string, want int64) {
		t.Helper()
		select {
		case buf := <-got:
			recs, ok := plan.RecordsOf[int64](buf.Records)
			if !ok || len(recs) != 1 || recs[0] != want {
				t.Fatalf("%s: delivered %v, want [%d]", what, buf.Records, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not delivered", what)
		}
	}
	const subject = "weir.fenced.data.test"
	script := []struct {
		seq, epoch uint64
		v          int64
		delivered  bool
	}{
		{1, 2, 10, true},  // the current coordinator's epoch
		{2, 1, 11, false}, // a replaced coordinator's: refused
		{2, 2, 12, true},  // the refused message used no sequence number
		{3, 0, 13, false}, // unstamped, once an epoch was seen: refused
		{3, 3, 14, true},  // a newer coordinator raises the fence
		{4, 2, 15, false}, // now epoch 2 is the replaced one
		{4, 3, 16, true},
	}
	for _, s := range script {
		r.dispatch("fenced", subject, buffer(s.seq, s.epoch, s.v))
		if s.delivered {
			expect(fmt.Sprintf("seq %d epoch %d", s.seq, s.epoch), s.v)
		}
	}
	select {
	case buf := <-got:
		t.Fatalf("a fenced message was delivered: %v", buf.Records)
	default:
	}
	if v := counters.Snapshot(); v.BadSeq != 0 || v.Malformed != 1 {
		t.Fatalf("counters %+v: want the unstamped message counted as malformed, the fenced ones not at all", v)
	}
}
