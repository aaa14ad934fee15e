package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/transport"
)

// TestDispatchDecodesBeforeTheSequenceCheck: a buffer whose body does not
// decode is counted once as malformed and uses no sequence number, so the
// genuine buffer with the same number that follows it is delivered, not
// dropped as a duplicate. A later repeat of that number is a duplicate.
func TestDispatchDecodesBeforeTheSequenceCheck(t *testing.T) {
	url := startNATS(t)
	n, counters := clusterNode(t, url, "b")
	r := n.remote
	got := make(chan *Buffer, 4)
	pid := n.system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*dataMsg); ok {
			got <- m.buf
		}
	}))
	r.register(pid, WireRef{Node: "b", ID: pid.Id, Kind: refChannel, Edge: 0, From: 0, To: 0})
	b := newPlan("dispatch")
	src := b.source("source", 1, 1)
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	b.connect(src, sink, plan.Forward).Codec = int64Codec{}
	r.addJob(&Job{Plan: b.job})

	body := func(records any) []byte {
		t.Helper()
		raw, err := msgpack.Marshal(records)
		if err != nil {
			t.Fatal(err)
		}
		p, err := msgpack.Marshal(&wireBody{K: kData, Seq: 1, Records: raw})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	buffer := func(seq uint64, payload []byte) *transport.Envelope {
		return &transport.Envelope{Type: transport.TypeBuffer, Job: "dispatch", From: "a/x", To: pid.Id, Seq: seq, Payload: payload}
	}
	const subject = "weir.dispatch.data.test"

	r.dispatch("dispatch", subject, buffer(1, body("not records")))
	if v := counters.Snapshot(); v.Malformed != 1 || v.BadSeq != 0 {
		t.Fatalf("after a forged buffer: counters %+v, want 1 malformed and no bad sequence", v)
	}
	r.dispatch("dispatch", subject, buffer(1, body([]int64{7, 8, 9})))
	select {
	case buf := <-got:
		recs, ok := plan.RecordsOf[int64](buf.Records)
		if !ok || len(recs) != 3 || recs[0] != 7 || recs[2] != 9 {
			t.Fatalf("delivered %v, want [7 8 9]", buf.Records)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the genuine buffer after a forged one was not delivered")
	}
	r.dispatch("dispatch", subject, buffer(1, body([]int64{7, 8, 9})))
	if v := counters.Snapshot(); v.Malformed != 1 || v.BadSeq != 1 {
		t.Fatalf("after a repeated sequence number: counters %+v, want 1 malformed and 1 bad sequence", v)
	}
	select {
	case buf := <-got:
		t.Fatalf("a duplicate was delivered: %v", buf.Records)
	default:
	}
}
