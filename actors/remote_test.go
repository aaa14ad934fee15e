package actors

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/transport"

	"github.com/weirstream/weir/internal/natstest"
	"github.com/weirstream/weir/internal/poll"
)

// int64Codec encodes batches of int64 records for the wire.
type int64Codec = plan.MsgpackCodec[int64]

// startNATS runs an embedded nats-server for one test, with the goroutine
// leak check, and returns its URL.
func startNATS(t *testing.T) string { return natstest.Start(t, natstest.Options{}).URL }

// spyOn connects to url and subscribes fn to subject, flushed so that
// nothing published once it returns is missed; the connection closes
// with the test.
func spyOn(t *testing.T, url, subject string, fn nats.MsgHandler) (*nats.Conn, *nats.Subscription) {
	t.Helper()
	spy, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(spy.Close)
	sub, err := spy.Subscribe(subject, fn)
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	return spy, sub
}

// clusterNode is an actor system joined to the test's NATS server.
func clusterNode(t *testing.T, url, id string) (*Node, *transport.Counters) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	counters := &transport.Counters{}
	n := NewNode(zerolog.Nop())
	n.AttachRemote(NewRemote(id, nc, counters, zerolog.Nop()))
	t.Cleanup(func() { n.Shutdown(); nc.Close() })
	return n, counters
}

// remotePlan is source(2) → key-group hash → identity(2) → forward → sink(2),
// with codecs on its edges, recording into rec.
func remotePlan(rec *recorder, n int64) *plan.Job {
	b := newPlan("remote")
	src := b.source("source", 2, n)
	mid := b.op("mid", plan.KindTransform, 2, func(int) (plan.Instance, error) { return identity{}, nil })
	sink := b.op("sink", plan.KindSink, 2, func(i int) (plan.Instance, error) {
		return &recordingSink{rec: rec, instance: i, srcP: 2, failAt: -1}, nil
	})
	b.connect(src, mid, plan.KeyGroupHash).Codec = int64Codec{}
	b.connect(mid, sink, plan.Forward).Codec = int64Codec{}
	return b.job
}

// twoNodeJob starts remotePlan over nodes a and b (odd instances on b) with
// opts and returns the coordinator's job and b's part.
func twoNodeJob(t *testing.T, a, b *Node, rec *recorder, n int64, opts Options) (*Job, *Job) {
	t.Helper()
	part, err := b.StartFragment(remotePlan(rec, n), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Cluster = &ClusterOptions{
		Place: func(op *plan.Operator, i int) (string, error) { return []string{"a", "b"}[i%2], nil },
		Nodes: func() []string { return []string{"a", "b"} },
	}
	job, err := a.Submit(remotePlan(rec, n), opts)
	if err != nil {
		t.Fatal(err)
	}
	return job, part
}

// TestRemoteJobOverTwoNodes runs one job over two actor systems joined by a
// real NATS server: odd instances on node b, even ones on the coordinator's
// node a, so every edge has channels that cross. Unaligned checkpoints run
// across the nodes; every record reaches the sinks exactly once and no bad
// input is seen.
func TestRemoteJobOverTwoNodes(t *testing.T) {
	url := startNATS(t)
	a, ca := clusterNode(t, url, "a")
	b, cb := clusterNode(t, url, "b")
	const n = 200000
	rec := newRecorder(n)
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{BatchSize: 256, ChannelCapacity: 4, Checkpoint: CheckpointOptions{Mode: barriers.Unaligned,
		Interval: 20 * time.Millisecond, Timeout: 10 * time.Second, Retain: 2, Store: st, FirstID: 1}}
	job, part := twoNodeJob(t, a, b, rec, n, opts)
	select {
	case <-job.Done():
	case <-time.After(flowDeadline):
		t.Fatal("job did not finish")
	}
	if err := job.Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-part.Done():
	case <-time.After(flowDeadline):
		t.Fatal("node b's part did not end with the job")
	}
	if len(rec.problems) > 0 {
		t.Fatalf("problems: %v", rec.problems)
	}
	if got := rec.count.Load(); got != n {
		t.Fatalf("sinks got %d records, want %d", got, n)
	}
	for v := range rec.seen {
		if c := rec.seen[v].Load(); c != 1 {
			t.Fatalf("value %d arrived %d times", v, c)
		}
	}
	if len(job.Checkpoints()) == 0 {
		t.Fatal("no checkpoint completed across the nodes")
	}
	want := map[string]string{"source[0]": "a", "source[1]": "b", "mid[0]": "a", "mid[1]": "b", "sink[0]": "a", "sink[1]": "b"}
	if got := job.Placement(); !reflect.DeepEqual(got, want) {
		t.Fatalf("placement %v, want %v", got, want)
	}
	for name, c := range map[string]*transport.Counters{"a": ca, "b": cb} {
		if v := c.Snapshot(); v != (transport.CounterValues{}) {
			t.Fatalf("node %s saw bad input: %+v", name, v)
		}
	}
}

// TestWireRoundTrip: every message that crosses nodes survives encoding and
// decoding, with actor references resolved on the receiving node.
func TestWireRoundTrip(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	rec := newRecorder(10)
	p := remotePlan(rec, 10)
	j := a.newJob(p, Options{})
	r := a.remote
	r.addJob(j)
	ch := WireRef{Node: "b", ID: "node/job-remote/sink-1/in-mid-1", Kind: refChannel, Edge: 1, From: 1, To: 1}
	task := WireRef{Node: "b", ID: "node/job-remote/mid-1", Kind: refTask, Op: 1, Instance: 1}
	chPID, taskPID := r.resolve(j, ch), r.resolve(j, task)
	snap := store.TaskSnapshot{Operator: "mid", Instance: 1, SourceOffset: -1,
		KeyGroups: map[int]store.BlobRef{7: {Name: "mid/1/state", Size: 10, CRC32C: 3}}}
	msgs := []any{
		&dataMsg{buf: &Buffer{Seq: 3, Records: plan.Records[int64]{1, 2}}},
		&dataMsg{buf: &Buffer{Seq: 4, Records: (&plan.Writer[int64]{}).EmptyBatch(), Mark: Mark{Kind: WatermarkMark, At: plan.MaxWatermark}}},
		&barrierMsg{id: 8, lastSeq: 4, unaligned: true, pending: []*Buffer{{Seq: 4, Records: plan.Records[int64]{7}, Mark: Mark{Kind: IdleMark}}}},
		&eosMsg{lastSeq: 9},
		&barrierMsg{id: 4, lastSeq: 3, unaligned: true, pending: []*Buffer{{Seq: 3, Records: plan.Records[int64]{5}}}},
		&barrierMsg{id: 6, lastSeq: 8, final: true},
		&creditMsg{n: 2, output: 0, channel: 1},
		&channelWireMsg{producer: taskPID, output: 0, channel: 1},
		&wireMsg{outputs: [][]*actor.PID{{chPID}}},
		&startMsg{}, &triggerMsg{id: 5, final: true}, &triggerMsg{id: 7, stop: true}, &checkpointDoneMsg{id: 5}, &checkpointAbortMsg{id: 6},
		&finishSourceMsg{}, &endInputMsg{}, &chaosPanicMsg{},
		&taskReadyMsg{op: 1, instance: 1, gen: 2, inputs: []*actor.PID{chPID}},
		&sourceIdleMsg{op: 0, instance: 1, gen: 1}, &taskFinishedMsg{op: 2, instance: 0, gen: 3},
		&taskResumedMsg{op: 1, instance: 1, gen: 4}, &sinkCommittedMsg{op: 2, instance: 1, gen: 3, id: 9},
		&taskAckMsg{id: 5, op: 1, instance: 1, snap: snap, alignment: time.Millisecond, unaligned: true, stateB: 10, inflightB: 20, buffers: 2},
		&taskDeclineMsg{id: 5, op: 1, instance: 0, reason: "disk full"},
		&stopTaskMsg{op: 1, instance: 1, token: 77}, &stopActorMsg{}, &remoteTerminatedMsg{op: 1, instance: 1, token: 77},
		&endFragmentMsg{reason: "finished", run: 12}, &pruneMsg{ids: []uint64{3, 4}, run: 12},
	}
	for _, m := range msgs {
		if got := wireTrip(t, r, j, ch, m); !reflect.DeepEqual(got, m) {
			t.Fatalf("%T: round trip gave %#v, want %#v", m, got, m)
		}
	}
	if _, _, err := r.encode(j, ch, &pumpMsg{}, nil); err == nil {
		t.Fatal("a local-only message was encoded")
	}
	if _, err := r.decode(j, ch, &wireBody{K: "launch"}); err == nil {
		t.Fatal("an unknown message kind decoded")
	}
	if _, err := r.decode(j, ch, &wireBody{K: kData, Records: []byte{0xc1}}); err == nil {
		t.Fatal("corrupt records decoded")
	}
}

// FuzzDecodeWireBody: whatever arrives on the wire, decoding never panics.
func FuzzDecodeWireBody(f *testing.F) {
	for _, b := range []wireBody{{K: kData, Records: []byte{0x92, 1, 2}}, {K: kWire, Refs: [][]WireRef{{{Node: "x", ID: "y"}}}},
		{K: kAck, Snap: &store.TaskSnapshot{}}, {K: kSpawn, Ref: &WireRef{Node: "a", ID: "c"}}} {
		raw, _ := msgpack.Marshal(&b)
		f.Add(raw)
	}
	f.Add([]byte{0x81, 0xa1, 'k', 0xa4, 'd', 'a', 't', 'a'})
	f.Fuzz(func(t *testing.T, data []byte) {
		var b wireBody
		if err := msgpack.Unmarshal(data, &b); err != nil {
			return
		}
		r := &Remote{node: "a", proxies: map[refKey]proxyEntry{}, targets: map[string]WireRef{}, local: map[string]WireRef{}, jobs: map[string]*Job{}}
		j := &Job{Plan: remotePlan(newRecorder(1), 1)}
		b.Ref, b.Refs = nil, nil // references spawn stand-ins; their decoding is covered above
		_, _ = r.decode(j, WireRef{Edge: 1}, &b)
	})
}

// TestSlowConsumerFailsTheReceiver: when NATS reports that a subscription
// dropped messages, the actor it feeds fails (here, without checkpoints,
// the job fails and says why) instead of waiting for data that never comes.
func TestSlowConsumerFailsTheReceiver(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	b, _ := clusterNode(t, url, "b")
	const n = 100000
	rec := newRecorder(n)
	rec.gate = make(chan struct{})
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(rec.gate)
		}
	}
	defer open()
	opts := Options{BatchSize: 256, ChannelCapacity: 4}
	job, _ := twoNodeJob(t, a, b, rec, n, opts)
	// A sink blocked in Write: data flows and piles up.
	if !poll.Until(flowDeadline, poll.Every, func() bool { return rec.writing.Load() > 0 }) {
		t.Fatal("no data reached a sink")
	}
	// sink[1] on node b reads mid[1] over data subject edge 1, 1→1; wait until
	// its subscription is up, or the report would find no owner.
	subject := transport.DataSubject("remote", 1, 1, 1)
	listening := func() bool {
		b.remote.mu.Lock()
		defer b.remote.mu.Unlock()
		return b.remote.owners[subject] != nil
	}
	if !poll.Until(flowDeadline, poll.Every, listening) {
		t.Fatalf("nobody listens on %s", subject)
	}
	b.remote.SlowConsumer(subject)
	// The failed channel's supervisor is its sink task, which must leave the
	// blocked Write to handle the failure.
	open()
	select {
	case <-job.Done():
	case <-time.After(flowDeadline):
		t.Fatal("the job did not fail")
	}
	if err := job.Err(); err == nil || !strings.Contains(err.Error(), "slow consumer") {
		t.Fatalf("job error %v does not name the slow consumer", err)
	}
}

// TestRemoteBackpressureBoundsProducers: with the sinks blocked, sources on
// both nodes stop after filling the channels' credit: what they read stays
// within the capacity of the channels, crossing nodes or not.
func TestRemoteBackpressureBoundsProducers(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	b, _ := clusterNode(t, url, "b")
	const n, batch, capacity = 300000, 256, 4
	rec := newRecorder(n)
	rec.gate = make(chan struct{})
	opts := Options{BatchSize: batch, ChannelCapacity: capacity}
	job, part := twoNodeJob(t, a, b, rec, n, opts)
	// Per channel: C buffers in it, plus the producer's outbox (≤ 2) and the
	// consumer's delivery window; six channels in this plan.
	const bound = 6 * (capacity + maxOutboxBound + capacity) * batch
	read := func() int64 { return job.Metrics.RecordsIn.Load() + part.Metrics.RecordsIn.Load() }
	// Every check fails the test past the bound; the wait ends once the
	// sources have read nothing new for 50 checks (100 ms).
	last, still := int64(-1), 0
	stopped := poll.Until(flowDeadline, poll.Every, func() bool {
		got := read()
		if got > bound {
			t.Fatalf("sources read %d records with the sinks blocked; the channels hold at most %d", got, bound)
		}
		if got == last && got > 0 {
			still++
		} else {
			still = 0
		}
		last = got
		return still >= 50
	})
	if !stopped {
		t.Fatal("sources never stopped")
	}
	for _, m := range []*Metrics{job.Metrics, part.Metrics} {
		if occ := m.MaxChannelOccupancy.Load(); occ > capacity {
			t.Fatalf("a channel held %d buffers, capacity %d", occ, capacity)
		}
	}
	t.Logf("sources stopped at %d records (bound %d)", last, bound)
	close(rec.gate)
	select {
	case <-job.Done():
	case <-time.After(flowDeadline):
		t.Fatal("job did not finish once the sinks ran")
	}
	if err := job.Err(); err != nil {
		t.Fatal(err)
	}
	if got := rec.count.Load(); got != n {
		t.Fatalf("sinks got %d records, want %d", got, n)
	}
}
