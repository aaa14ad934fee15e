package actors

import (
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/transport"
)

// TestStopProxiesWaitsForTheStandIns: a run's end on a node returns only
// once its stand-ins have stopped, after forwarding what was posted to
// them before. Before, it only posted the stop: a stand-in still working
// through its mailbox published after the run was over, and under a later
// run of the same name and epoch (same actor ids) its late credit counted
// as the later run's (a producer then sent past its channel's capacity).
func TestStopProxiesWaitsForTheStandIns(t *testing.T) {
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	r := a.remote
	run := a.newJob(remotePlan(newRecorder(10), 10), Options{Cluster: &ClusterOptions{Epoch: 1, Nodes: func() []string { return []string{"a", "b"} }}})

	ch := WireRef{Node: "b", ID: "node/job-remote/sink-1/in-mid-1", Kind: refChannel, Edge: 1, From: 1, To: 1}
	var got atomic.Int64
	spyOn(t, url, transport.DataSubject("remote", ch.Edge, ch.From, ch.To), func(*nats.Msg) { got.Add(1) })

	r.addJob(run)
	pid := r.resolve(run, ch)
	if pid == nil {
		t.Fatal("no stand-in")
	}
	const n = 2000
	for i := range n {
		a.system.Root.Send(pid, &dataMsg{buf: &Buffer{Seq: uint64(i + 1), Records: plan.Records[int64]{int64(i)}}})
	}
	r.stopProxies(run)
	r.mu.Lock()
	_, running := r.targets[pid.Id]
	r.mu.Unlock()
	if running {
		t.Fatal("stopProxies returned while the run's stand-in was still running")
	}
	if err := r.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if !poll.Until(flowDeadline, poll.Every, func() bool { return got.Load() >= n }) {
		t.Fatalf("the spy got %d of the %d messages posted before the stop", got.Load(), n)
	}
}
