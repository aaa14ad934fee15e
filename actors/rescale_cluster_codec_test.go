package actors

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/transport"
)

// rescaleTestPlan is a rescale of remotePlan's mid and sink (joined by a
// forward edge) from 2 to 3 instances.
func rescaleTestPlan(t *testing.T, p *plan.Job) *rescale.Plan {
	t.Helper()
	rp, err := rescale.NewPlan(rescale.Input{Seq: 1, Topology: rescale.TopologyOf(p),
		Request: []rescale.Target{{Operator: "mid", Parallelism: 3}, {Operator: "sink", Parallelism: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// rescaleWireSetup is a node with remotePlan's job, and a rescale of it.
func rescaleWireSetup(t *testing.T) (*Remote, *Job, *plan.Job, *rescale.Plan) {
	t.Helper()
	a, _ := clusterNode(t, startNATS(t), "a")
	p := remotePlan(newRecorder(10), 10)
	j := a.newJob(p, Options{})
	a.remote.addJob(j)
	return a.remote, j, p, rescaleTestPlan(t, p)
}

// wireTrip encodes m for to, marshals and unmarshals the body, and decodes
// it again.
func wireTrip(t *testing.T, r *Remote, j *Job, to WireRef, m any) any {
	t.Helper()
	typ, body, err := r.encode(j, to, m, nil)
	if err != nil {
		t.Fatalf("encode %T: %v", m, err)
	}
	raw, err := msgpack.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var back wireBody
	if err := msgpack.Unmarshal(raw, &back); err != nil {
		t.Fatalf("%T: %v", m, err)
	}
	got, err := r.decode(j, to, &back)
	if err != nil {
		t.Fatalf("decode %T (%s): %v", m, typ, err)
	}
	return got
}

// samePlan reports whether two plans encode alike.
func samePlan(t *testing.T, a, b *rescale.Plan) bool {
	t.Helper()
	ea, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ea, eb)
}

// TestRescaleWireRoundTrip: every message of a live rescale crosses nodes
// and comes back as sent: the begin with the task's part, its plan and the
// operator after the rescale (made from the receiving node's plan), the
// barrier with the buffers it carries, the handoff with state bytes and
// records per input edge, the spawn of an added instance and the commit
// with their plans.
func TestRescaleWireRoundTrip(t *testing.T) {
	r, j, p, rp := rescaleWireSetup(t)
	ch := WireRef{Node: "b", ID: "node/job-remote/sink-1/in-mid-1", Kind: refChannel, Edge: 1, From: 1, To: 1}
	task := WireRef{Node: "b", ID: "node/job-remote/mid-1", Kind: refTask, Op: 1, Instance: 1}
	chPID, taskPID := r.resolve(j, ch), r.resolve(j, task)
	plain := []any{
		&rescaleAddInputsMsg{seq: 1, edge: 0, producers: []int{2}},
		&rescaleInputsAddedMsg{seq: 1, op: 1, instance: 1, edge: 0, producers: []int{2}, pids: []*actor.PID{chPID}},
		&rescaleInjectMsg{},
		&rescaleBegunMsg{seq: 1, op: 1, instance: 0},
		&rescaleFenceMsg{from: 1},
		&rescaleStagedMsg{from: 2, state: []byte(`[{"writer":3,"id":7}]`)},
		&rescaleEndMsg{retired: []int{2, 3}},
		&rescaleDrainedMsg{seq: 1, op: 2, instance: 1, input: 2},
		&rescaleTaskDoneMsg{seq: 1, op: 1, instance: 2, result: rescale.TaskResult{Received: 3, Bytes: 40, LongestPause: time.Millisecond}},
		&rescaleHandoffMsg{from: 1, groups: []int{7, 9}, blobs: map[int][]byte{7: {1, 2, 3}, 9: {4}}, bytes: 4,
			records: map[int][]heldBatch{7: {{edge: 0, recs: plan.Records[int64]{5, 6}}}, 9: {}}},
	}
	for _, m := range plain {
		got := wireTrip(t, r, j, task, m)
		if h, ok := m.(*rescaleHandoffMsg); ok {
			delete(h.records, 9) // a group without records arrives without its entry
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("%T: round trip gave %#v, want %#v", m, got, m)
		}
	}
	bar := &rescaleBarrierMsg{lastSeq: 8, pending: []*Buffer{{Seq: 8, Records: plan.Records[int64]{7}, Mark: Mark{Kind: IdleMark}}}}
	if got := wireTrip(t, r, j, ch, bar); !reflect.DeepEqual(got, bar) {
		t.Fatalf("barrier: round trip gave %#v, want %#v", got, bar)
	}

	cfg := rescale.TaskConfigFor(rp, "mid", 1, 2)
	cfg.HoldBytes = 4096
	begin := &rescaleBeginMsg{cfg: cfg, plan: rp, ack: true, outputs: [][]*actor.PID{{chPID}}, peers: []*actor.PID{taskPID, nil}}
	got := wireTrip(t, r, j, task, begin).(*rescaleBeginMsg)
	if !reflect.DeepEqual(got.cfg, cfg) || !got.ack || !reflect.DeepEqual(got.outputs, begin.outputs) || !reflect.DeepEqual(got.peers, begin.peers) ||
		!samePlan(t, got.plan, rp) {
		t.Fatalf("begin: round trip gave %+v, want %+v", got, begin)
	}
	if got.next.Name != "mid" || got.next.Parallelism != 3 || got.next.Outputs[0].To.Parallelism != 3 || p.Operators[1].Parallelism != 2 {
		t.Fatalf("begin: the operator after the rescale is %s at %d (sink at %d), the job's plan has mid at %d",
			got.next.Name, got.next.Parallelism, got.next.Outputs[0].To.Parallelism, p.Operators[1].Parallelism)
	}
	stay := wireTrip(t, r, j, task, &rescaleBeginMsg{cfg: cfg, plan: rp}).(*rescaleBeginMsg)
	if stay.outputs != nil || stay.ack {
		t.Fatalf("begin without outputs came back with %v (ack %v)", stay.outputs, stay.ack)
	}

	commit := wireTrip(t, r, j, WireRef{Node: "b", ID: "node/job-remote", Kind: refJob}, &rescaleCommitPartMsg{plan: rp, run: 12}).(*rescaleCommitPartMsg)
	if commit.run != 12 || !samePlan(t, commit.plan, rp) {
		t.Fatalf("commit: round trip gave %+v", commit)
	}
	spawn := wireTrip(t, r, j, WireRef{Node: "b", ID: "node/job-remote", Kind: refJob},
		&spawnTaskMsg{op: 1, instance: 2, gen: 0, token: 5, run: 12, coordinator: taskPID, rescale: rp}).(*spawnTaskMsg)
	if spawn.rescale == nil || !samePlan(t, spawn.rescale, rp) || spawn.instance != 2 {
		t.Fatalf("spawn: round trip gave %+v", spawn)
	}
}

// TestRescaleWireRefusesBadInput: a rescale message without its fields,
// with records of an input the operator does not have, with a plan that
// does not decode or does not fit the job, or with channels that do not
// match its producers is refused with the reason.
func TestRescaleWireRefusesBadInput(t *testing.T) {
	r, j, p, rp := rescaleWireSetup(t)
	enc, err := rp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// A plan from mid at 3, which the job does not run at.
	q := clonePlan(p)
	if err := rp.Apply(q); err != nil {
		t.Fatal(err)
	}
	later, err := rescale.NewPlan(rescale.Input{Seq: 2, Topology: rescale.TopologyOf(q),
		Request: []rescale.Target{{Operator: "mid", Parallelism: 4}, {Operator: "sink", Parallelism: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	later.Input.Topology.Operators = later.Input.Topology.Operators[:2] // and a topology of another job
	encLater, err := msgpack.Marshal(later)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rescale.TaskConfigFor(rp, "mid", 1, 2)
	task := WireRef{Node: "a", ID: "x", Kind: refTask, Op: 1, Instance: 1}
	cases := []struct {
		body wireBody
		want string
	}{
		{wireBody{K: kRsBegin}, "without its rescale fields"},
		{wireBody{K: kRsBegin, Rescale: &wireRescale{Plan: enc}}, "without the task's part"},
		{wireBody{K: kRsBegin, Rescale: &wireRescale{Config: &cfg, Plan: []byte{0xc1}}}, "decode rescale plan"},
		{wireBody{K: kRsBegin, Rescale: &wireRescale{Config: &cfg, Plan: encLater}}, "rescale"},
		{wireBody{K: kRsHandoff, Rescale: &wireRescale{Records: map[int][]wireHeld{3: {{Edge: 4, Records: []byte{0x91, 1}}}}}}, "input 4"},
		{wireBody{K: kRsHandoff, Rescale: &wireRescale{Records: map[int][]wireHeld{3: {{Edge: 0, Records: []byte{0xc1}}}}}}, ""},
		{wireBody{K: kRsInputsAdded, Rescale: &wireRescale{Producers: []int{1, 2}}}, "one channel per producer"},
		{wireBody{K: kRsCommitPart, Rescale: &wireRescale{Plan: []byte{0x80}}}, "no operator to rescale"},
		{wireBody{K: kSpawn, Ref: &WireRef{Node: "a", ID: "c"}, Rescale: &wireRescale{Plan: []byte{1}}}, "spawn request"},
	}
	for _, c := range cases {
		_, err := r.decode(j, task, &c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decode %s: %v, want an error containing %q", c.body.K, err, c.want)
		}
	}
}

// FuzzDecodeRescaleBody: whatever rescale message arrives on the wire,
// decoding never panics.
func FuzzDecodeRescaleBody(f *testing.F) {
	rp, err := rescale.NewPlan(rescale.Input{Seq: 1, Topology: rescale.TopologyOf(remotePlan(newRecorder(1), 1)),
		Request: []rescale.Target{{Operator: "mid", Parallelism: 3}, {Operator: "sink", Parallelism: 3}}})
	if err != nil {
		f.Fatal(err)
	}
	enc, err := rp.Encode()
	if err != nil {
		f.Fatal(err)
	}
	cfg := rescale.TaskConfig{Rescale: 1, Out: []keygroups.Move{{Group: 3, From: 1, To: 2}}}
	for _, b := range []wireBody{{K: kRsBegin, Rescale: &wireRescale{Config: &cfg, Plan: enc}},
		{K: kRsHandoff, Rescale: &wireRescale{Groups: []int{3}, Blobs: map[int][]byte{3: {1}}, Records: map[int][]wireHeld{3: {{Edge: 0, Records: []byte{0x91, 1}}}}}},
		{K: kRsBarrier, LastSeq: 3, Pending: []wireBuffer{{Seq: 3, Records: []byte{0x91, 1}}}},
		{K: kRsCommitPart, Rescale: &wireRescale{Plan: enc}}, {K: kRsEnd, Rescale: &wireRescale{Retired: []int{1}}}} {
		raw, _ := msgpack.Marshal(&b)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b wireBody
		if err := msgpack.Unmarshal(data, &b); err != nil {
			return
		}
		r := &Remote{node: "a", proxies: map[refKey]proxyEntry{}, targets: map[string]WireRef{}, local: map[string]WireRef{}, jobs: map[string]*Job{}}
		j := &Job{Plan: remotePlan(newRecorder(1), 1)}
		b.Ref, b.Refs = nil, nil // references spawn stand-ins
		if b.Rescale != nil {
			b.Rescale.Peers = nil
		}
		_, _ = r.decode(j, WireRef{Edge: 1, Op: 1}, &b)
	})
}

// TestDataSubscriptionDeliversToItsOwner: a subscription to a channel's
// data subject delivers only to its own channel actor (an input channel
// of an instance a rescale removed may still listen on the subject of the
// one that replaced it); control and credit subjects deliver to any actor.
func TestDataSubscriptionDeliversToItsOwner(t *testing.T) {
	owner := actor.NewPID("local", "node/job-j/count-2/in-source-0-r3")
	cases := []struct {
		subject string
		want    string
	}{
		{transport.DataSubject("j", 0, 0, 2), owner.Id},
		{transport.CreditSubject("j", 0, 0, 2), ""},
		{transport.ControlSubject("j", "n1"), ""},
		{transport.CoordinatorSubject("j"), ""},
		{"not a subject", ""},
	}
	for _, c := range cases {
		if got := ownerOnly(c.subject, owner); got != c.want {
			t.Errorf("ownerOnly(%q) = %q, want %q", c.subject, got, c.want)
		}
	}
}
