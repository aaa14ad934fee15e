package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
)

// shellDeadline bounds every wait of the shell tests.
const shellDeadline = 30 * time.Second

// probe is a real actor that hands every message it receives (but the actor
// system's own lifecycle messages) to the test, in arrival order. As a parent
// it is its children's supervisor and reports their failures the same way.
type probe struct {
	got   chan any
	spawn *actor.Props // spawned as a child named "child" on Started
	child chan *actor.PID
}

// probeFailure is a child failure seen by a parent probe.
type probeFailure struct{ reason any }

func newProbe() *probe { return &probe{got: make(chan any, 4096), child: make(chan *actor.PID, 1)} }

func (p *probe) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		if p.spawn != nil {
			pid, err := ctx.SpawnNamed(p.spawn, "child")
			if err != nil {
				panic(fmt.Errorf("probe: spawn child: %w", err))
			}
			p.child <- pid
		}
		return
	case actor.SystemMessage, actor.AutoReceiveMessage:
		return
	}
	p.got <- ctx.Message()
}

// HandleFailure records a child's failure; the child stays suspended.
func (p *probe) HandleFailure(_ *actor.ActorSystem, _ actor.Supervisor, _ *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	p.got <- probeFailure{reason: reason}
}

// spawnProbe starts a probe on node n.
func spawnProbe(t *testing.T, n *Node, p *probe) *actor.PID {
	t.Helper()
	props := actor.PropsFromProducer(func() actor.Actor { return p }, actor.WithMailbox(mailbox.New()), actor.WithSupervisor(p))
	pid := n.system.Root.Spawn(props)
	t.Cleanup(func() { n.system.Root.Stop(pid) })
	return pid
}

// next waits for the probe's next message of type T, skipping others, and
// fails the test after shellDeadline.
func next[T any](t *testing.T, p *probe, what string) T {
	t.Helper()
	deadline := time.After(shellDeadline)
	for {
		select {
		case m := <-p.got:
			if f, ok := m.(probeFailure); ok {
				t.Fatalf("waiting for %s: child failed: %v", what, f.reason)
			}
			if v, ok := m.(T); ok {
				return v
			}
		case <-deadline:
			var zero T
			t.Fatalf("waited %v for %s", shellDeadline, what)
			return zero
		}
	}
}

// chainPlan is src → mid → sink, each one instance, forward edges of int64.
func chainPlan(name string) (*plan.Job, *plan.Operator) {
	b := newPlan(name)
	src := b.source("src", 1, 0)
	mid := b.op("mid", plan.KindTransform, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return discard{}, nil })
	b.connect(src, mid, plan.Forward)
	b.connect(mid, sink, plan.Forward)
	return b.job, mid
}

// shellJob is a Job record for driving one task or channel actor by hand:
// checkpoints on (nothing triggers them but the test), a local store, one
// record per buffer.
func shellJob(t *testing.T, n *Node, p *plan.Job, capacity int) *Job {
	t.Helper()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o, err := Options{BatchSize: 1, FlushInterval: time.Hour, ChannelCapacity: capacity, DeliveryWindow: capacity,
		Checkpoint: CheckpointOptions{Mode: barriers.Unaligned, Interval: time.Hour, Timeout: time.Hour, Retain: 1, Store: st}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	j := n.newJob(p, o)
	useUploader(t, j, newUploader(nil, 1, 64, shellDeadline))
	return j
}

// useUploader makes u the job's uploader, stopped when the test ends.
func useUploader(t *testing.T, j *Job, u *uploader) {
	t.Helper()
	if j.uploads != nil {
		j.uploads.stop()
	}
	j.uploads = u
	t.Cleanup(u.stop)
}

// channelStateManifest stores values as the channel state of input 0 of
// op's instance 0 (one buffer per value) in checkpoint id, and returns the
// manifest that restores it.
func channelStateManifest(t *testing.T, j *Job, op *plan.Operator, id uint64, values []int64) *store.Manifest {
	t.Helper()
	return channelsStateManifest(t, j, op, id, map[int][]int64{0: values})
}

// channelsStateManifest stores, per input of op's instance 0, values as its
// channel state (one buffer per value) in checkpoint id, and returns the
// manifest that restores it.
func channelsStateManifest(t *testing.T, j *Job, op *plan.Operator, id uint64, state map[int][]int64) *store.Manifest {
	t.Helper()
	ts := store.TaskSnapshot{Operator: op.Name, Instance: 0, SourceOffset: -1}
	for input := 0; input < len(state); input++ {
		ts.Channels = append(ts.Channels, storeChannelState(t, j, op, id, 0, input, state[input]))
	}
	par := map[string]int{}
	for _, o := range j.Plan.Operators {
		par[o.Name] = o.Parallelism
	}
	return &store.Manifest{Job: j.Plan.Name, CheckpointID: id, MaxParallelism: j.Plan.MaxParallelism, Parallelism: par, Tasks: []store.TaskSnapshot{ts}}
}

// storeChannelState stores values as the channel state of input of op's
// instance in checkpoint id, one buffer per value, and returns its entry.
func storeChannelState(t *testing.T, j *Job, op *plan.Operator, id uint64, instance, input int, values []int64) store.ChannelBlob {
	t.Helper()
	batches := make([]inflight.Batch, len(values))
	for i, v := range values {
		batches[i] = inflight.Batch{Seq: uint64(i + 1), Records: plan.Records[int64]{v}}
	}
	data, records, err := inflight.Encode(op.Inputs[0].Codec, batches)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s/%d/input-%d", op.Name, instance, input)
	ref, err := j.opts.Checkpoint.Store.PutBlob(context.Background(), j.Plan.Name, id, name, data)
	if err != nil {
		t.Fatal(err)
	}
	return store.ChannelBlob{Input: input, Blob: store.Section(ref, 0, data), Buffers: len(values), Records: records}
}

// capturedState reads the channel state an acknowledgement stored, as the
// values of each input in order.
func capturedState(t *testing.T, j *Job, op *plan.Operator, ack *taskAckMsg) map[int][]int64 {
	t.Helper()
	out := map[int][]int64{}
	m := &store.Manifest{Job: j.Plan.Name, CheckpointID: ack.id}
	chans, _, _, err := readChannelState(context.Background(), j.opts.Checkpoint.Store, m, op.Name, ack.instance, ack.snap.Channels, nil,
		func(store.ChannelBlob) plan.BatchCodec { return op.Inputs[0].Codec })
	if err != nil {
		t.Fatalf("read channel state: %v", err)
	}
	for k, cb := range ack.snap.Channels {
		for _, b := range chans[k] {
			vs, _ := plan.RecordsOf[int64](b.Records)
			out[cb.Input] = append(out[cb.Input], vs...)
		}
	}
	return out
}

// fanInPlan is src (two instances) → mid → sink: mid has two inputs.
func fanInPlan(name string) (*plan.Job, *plan.Operator) {
	b := newPlan(name)
	src := b.source("src", 2, 0)
	mid := b.op("mid", plan.KindTransform, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return discard{}, nil })
	b.connect(src, mid, plan.Rebalance)
	b.connect(mid, sink, plan.Forward)
	return b.job, mid
}

// buf is a one-record buffer.
func buf(seq uint64, v int64) *Buffer { return &Buffer{Seq: seq, Records: plan.Records[int64]{v}} }

// collectData reads the values of n data messages from a downstream probe,
// skipping other messages.
func collectData(t *testing.T, down *probe, n int) []int64 {
	t.Helper()
	var got []int64
	for len(got) < n {
		if d, ok := next[any](t, down, fmt.Sprintf("record %d of %d", len(got)+1, n)).(*dataMsg); ok {
			got = append(got, recordsOf(t, d.buf)...)
		}
	}
	return got
}

// spawnTaskUnder starts instance 0 of op as the child of a parent probe, as
// the job actor does, restoring from m (nil: fresh). It returns the task,
// the parent probe and the task's ready message (its input channels).
func spawnTaskUnder(t *testing.T, j *Job, op *plan.Operator, m *store.Manifest) (*actor.PID, *probe, *taskReadyMsg) {
	t.Helper()
	parent := newProbe()
	parent.spawn = actor.PropsFromProducer(func() actor.Actor { return newTask(j, op, 0, 0, m) },
		actor.WithMailbox(mailbox.New()), actor.WithDispatcher(j.node.dispatcher), actor.WithSupervisor(escalateStrategy{}))
	spawnProbe(t, j.node, parent)
	var pid *actor.PID
	select {
	case pid = <-parent.child:
	case <-time.After(shellDeadline):
		t.Fatalf("task not spawned within %v", shellDeadline)
	}
	ready := next[*taskReadyMsg](t, parent, "task ready")
	return pid, parent, ready
}

// recordsOf returns the int64 values of a buffer.
func recordsOf(t *testing.T, b *Buffer) []int64 {
	t.Helper()
	vs, ok := plan.RecordsOf[int64](b.Records)
	if !ok {
		t.Fatalf("buffer %d holds %T, not int64 records", b.Seq, b.Records)
	}
	return vs
}

// waitClosed waits for ch to be closed, failing after shellDeadline.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(shellDeadline):
		t.Fatalf("waited %v for %s", shellDeadline, what)
	}
}

// dumpChannel asks a channel actor for its state.
func dumpChannel(t *testing.T, n *Node, pid *actor.PID) ChannelDump {
	t.Helper()
	return ask(t, n, pid, func(reply chan ChannelDump) any { return &dumpChannelMsg{reply: reply} })
}

// ask sends pid the message msg makes around a reply channel and waits for
// the answer, failing after shellDeadline.
func ask[T any](t *testing.T, n *Node, pid *actor.PID, msg func(chan T) any) T {
	t.Helper()
	reply := make(chan T, 1)
	n.system.Root.Send(pid, msg(reply))
	select {
	case d := <-reply:
		return d
	case <-time.After(shellDeadline):
		t.Fatalf("%s did not answer within %v", pid.Id, shellDeadline)
		var zero T
		return zero
	}
}

// waitChannel polls a channel's state until cond holds, failing after
// shellDeadline.
func waitChannel(t *testing.T, n *Node, pid *actor.PID, what string, cond func(ChannelDump) bool) ChannelDump {
	t.Helper()
	var d ChannelDump
	if !poll.Until(shellDeadline, poll.Every, func() bool { d = dumpChannel(t, n, pid); return cond(d) }) {
		t.Fatalf("waiting for %s: channel is %+v", what, d)
	}
	return d
}
