package actors

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/transport"
)

// awaitJob waits (bounded) for j to be done and its actors gone.
func awaitJob(t *testing.T, what string, j *Job) {
	t.Helper()
	for _, c := range []<-chan struct{}{j.Done(), j.Gone()} {
		select {
		case <-c:
		case <-time.After(flowDeadline):
			t.Fatalf("%s did not end", what)
		}
	}
}

// TestLateEndOfAnEarlierRunIsIgnored: the "job over" that the first run of a
// job sent to node b reaches b again once the second run of the same name
// (same epoch, same actor ids) has deployed its part there, as a message
// delayed on the way would. b's part of the second run ignores it: it keeps
// its tasks, and the second run finishes with every record exactly once.
func TestLateEndOfAnEarlierRunIsIgnored(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	b, cb := clusterNode(t, url, "b")

	// Keep a copy of the ends the coordinator sends to b's part.
	control := transport.ControlSubject("remote", "b")
	var mu sync.Mutex
	var ends []*nats.Msg
	spy, sub := spyOn(t, url, control, func(m *nats.Msg) {
		e, err := transport.FromMsg(m)
		if err != nil {
			return
		}
		if body, err := unmarshalBody(e.Payload); err == nil && body.K == kEnd {
			mu.Lock()
			ends = append(ends, m)
			mu.Unlock()
		}
	})

	const n = 2000
	opts := Options{BatchSize: 16, ChannelCapacity: 4}
	job1, part1 := twoNodeJob(t, a, b, newRecorder(n), n, opts)
	awaitJob(t, "run 1", job1)
	awaitJob(t, "run 1's part on b", part1)
	if err := job1.Err(); err != nil {
		t.Fatalf("run 1: %v", err)
	}
	// Run 1's actors are gone on both nodes; once the server has taken in
	// everything they published, none of it can reach run 2's actors
	// (their subscriptions are new) but the end this test sends again.
	for _, n := range []*Node{a, b} {
		if err := n.remote.nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	var late *nats.Msg
	if !poll.Until(flowDeadline, poll.Every, func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(ends) > 0 {
			late = ends[0]
		}
		return late != nil
	}) {
		t.Fatal("run 1 sent no end to node b")
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}

	// Run 2, its sinks held so that it cannot end before the late message
	// is in: every task of b's part is up.
	rec := newRecorder(n)
	rec.gate = make(chan struct{})
	var ungate sync.Once
	release := func() { ungate.Do(func() { close(rec.gate) }) }
	defer release()
	job2, part2 := twoNodeJob(t, a, b, rec, n, opts)
	if !poll.Until(flowDeadline, poll.Every, func() bool { return part2.LocalTasks() == 3 }) {
		t.Fatalf("run 2's part on b runs %d tasks, want 3", part2.LocalTasks())
	}

	// Run 1's end arrives late, followed on the same subject by a message
	// of an unknown type (nothing else counts one): once that is counted, b
	// has delivered the end to its part.
	if err := spy.PublishMsg(&nats.Msg{Subject: control, Header: late.Header, Data: late.Data}); err != nil {
		t.Fatal(err)
	}
	marker := nats.Header{}
	for k, v := range late.Header {
		marker[k] = v
	}
	marker.Set(transport.HeaderType, "no-such-type")
	if err := spy.PublishMsg(&nats.Msg{Subject: control, Header: marker, Data: late.Data}); err != nil {
		t.Fatal(err)
	}
	if !poll.Until(flowDeadline, poll.Every, func() bool { return cb.Snapshot().UnknownType == 1 }) {
		t.Fatalf("node b did not take in the late messages: counters %+v", cb.Snapshot())
	}
	release()

	awaitJob(t, "run 2", job2)
	if err := job2.Err(); err != nil {
		t.Fatalf("run 2 failed: %v", err)
	}
	awaitJob(t, "run 2's part on b", part2)
	checkExactlyOnce(t, rec, n, 1)
	if s := job2.Supervision(); s.Failures != 0 || s.Restarts != 0 {
		t.Fatalf("run 2 saw %d task failures and %d restarts: its part on b was disturbed", s.Failures, s.Restarts)
	}
}

// TestPartActsOnlyOnItsRun: a part prepared for run 2 of a job ignores an end
// of run 1 that comes before any request of its own run, and a spawn request
// of run 3 (a later run's message reaching the old part); it starts the task
// its own run asks for and ends on its own run's end.
func TestPartActsOnlyOnItsRun(t *testing.T) {
	url := startNATS(t)
	b, _ := clusterNode(t, url, "b")
	p := remotePlan(newRecorder(10), 10)
	part, err := b.StartFragment(p, Options{BatchSize: 16, ChannelCapacity: 4, Cluster: &ClusterOptions{Run: 2}})
	if err != nil {
		t.Fatal(err)
	}
	coord := b.system.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sink := p.Operators[2]
	part.send(&endFragmentMsg{reason: "run 1 over", run: 1})
	part.send(&spawnTaskMsg{op: sink.ID, instance: 0, gen: 1, token: 30, run: 3, coordinator: coord})
	part.send(&spawnTaskMsg{op: sink.ID, instance: 1, gen: 1, token: 20, run: 2, coordinator: coord})
	ctx, cancel := context.WithTimeout(context.Background(), flowDeadline)
	defer cancel()
	d, err := part.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for _, td := range d.Tasks {
		tasks = append(tasks, td.Task)
	}
	if want := []string{taskName(sink, 1)}; !reflect.DeepEqual(tasks, want) {
		t.Fatalf("the part runs %v, want %v (only its own run's task)", tasks, want)
	}
	select {
	case <-part.Done():
		t.Fatal("the part ended on another run's end")
	default:
	}
	part.send(&endFragmentMsg{reason: "run 2 over", run: 2})
	awaitJob(t, "the part", part)
	if err := part.Err(); err != nil {
		t.Fatalf("the part ended with %v", err)
	}
}

// TestEndWithoutRunIsBadInput: an end of a job from another node must name
// its run; one that does not is refused as bad input, never delivered.
func TestEndWithoutRunIsBadInput(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	j := a.newJob(remotePlan(newRecorder(10), 10), Options{})
	ref := WireRef{Node: "a", ID: "node/job-remote", Kind: refJob}
	if _, _, err := a.remote.encode(j, ref, &endFragmentMsg{reason: "over"}, nil); err == nil {
		t.Fatal("an end without its run was encoded")
	}
	if m, err := a.remote.decode(j, ref, &wireBody{K: kEnd, Reason: "over"}); err == nil {
		t.Fatalf("an end without its run decoded as %#v", m)
	}
}

// TestStandInOfANewRunWhileTheOldOneStops: when a part of a job needs a
// stand-in for an actor on another node while the stand-in an earlier run
// of the job had for it is still stopping (its name still taken), it gets a
// new stand-in, not none (which left the part without its coordinator).
func TestStandInOfANewRunWhileTheOldOneStops(t *testing.T) {
	url := startNATS(t)
	b, _ := clusterNode(t, url, "b")
	r := b.remote
	coord := WireRef{Node: "a", ID: "node/job-remote", Kind: refJob}
	// The earlier run's stand-in: forgotten by the remote, name still taken.
	old, err := b.system.Root.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "remote/a/node/job-remote")
	if err != nil {
		t.Fatal(err)
	}
	j := b.newJob(remotePlan(newRecorder(10), 10), Options{})
	pid := r.resolve(j, coord)
	if pid == nil || pid.Equal(old) {
		t.Fatalf("stand-in %v for the coordinator (the stopping one is %v)", pid, old)
	}
	if got := r.refOf(pid); got != coord {
		t.Fatalf("the new stand-in speaks for %+v, want %+v", got, coord)
	}
	if again := r.resolve(j, coord); !again.Equal(pid) {
		t.Fatalf("a second resolve gave %v, want the same stand-in %v", again, pid)
	}
}
