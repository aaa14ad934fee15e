package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/transport"
)

// TestStandInStampsItsOwnRunsEpoch attacks the fence from the sending side:
// a stand-in of an earlier run of a job (coordinator epoch 1) still sends
// after a later run of the same name (epoch 2) registered on the node. What
// it sends must carry epoch 1, so that the receivers' fences refuse it; the
// later run gets stand-ins of its own, stamped 2; the earlier run's end
// leaves the later run registered and its stand-ins running. Before, a
// message was stamped with the epoch of whichever run of that name was
// registered, so the earlier run's late messages went through the fence.
func TestStandInStampsItsOwnRunsEpoch(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	r := a.remote
	cluster := func(epoch uint64) Options {
		return Options{Cluster: &ClusterOptions{Epoch: epoch, Nodes: func() []string { return []string{"a", "b"} }}}
	}
	run1 := a.newJob(remotePlan(newRecorder(10), 10), cluster(1))
	run2 := a.newJob(remotePlan(newRecorder(10), 10), cluster(2))

	ch := WireRef{Node: "b", ID: "node/job-remote/sink-1/in-mid-1", Kind: refChannel, Edge: 1, From: 1, To: 1}
	epochs := make(chan uint64, 8)
	spyOn(t, url, transport.DataSubject("remote", ch.Edge, ch.From, ch.To), func(m *nats.Msg) {
		e, err := transport.FromMsg(m)
		if err != nil {
			t.Errorf("envelope: %v", err)
			return
		}
		body, err := unmarshalBody(e.Payload)
		if err != nil {
			t.Errorf("body: %v", err)
			return
		}
		epochs <- body.Epoch
	})
	sendVia := func(what string, pid *actor.PID, want uint64) {
		t.Helper()
		a.system.Root.Send(pid, &dataMsg{buf: &Buffer{Seq: 1, Records: plan.Records[int64]{7}}})
		select {
		case got := <-epochs:
			if got != want {
				t.Fatalf("%s: sent at epoch %d, want %d", what, got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: nothing published", what)
		}
	}

	r.addJob(run1)
	old := r.resolve(run1, ch)
	r.addJob(run2) // the later run of the same name registers here
	sendVia("the earlier run's stand-in", old, 1)

	cur := r.resolve(run2, ch)
	if cur == nil || cur.Equal(old) {
		t.Fatalf("the later run's stand-in is %v, the earlier run's %v: want one of its own", cur, old)
	}
	sendVia("the later run's stand-in", cur, 2)

	// The earlier run ends here: the later one stays registered, and its
	// stand-in keeps sending.
	r.removeJob(run1)
	r.stopProxies(run1)
	if j, ok := r.job("remote"); !ok || j != run2 {
		t.Fatalf("after the earlier run's end the job registered is %p (%v), want the later run %p", j, ok, run2)
	}
	sendVia("the later run's stand-in after the earlier run ended", cur, 2)
}
