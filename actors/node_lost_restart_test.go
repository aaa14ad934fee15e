package actors

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/supervision"
)

// gatedCloseSink discards what it gets; once armed, Close waits for the
// gate to open, so the stop of its task is confirmed late.
type gatedCloseSink struct {
	armed *atomic.Bool
	gate  chan struct{}
}

func (s gatedCloseSink) Open(plan.TaskInfo) error { return nil }
func (s gatedCloseSink) Write(plan.Batch) error   { return nil }
func (s gatedCloseSink) Finish() error            { return nil }
func (s gatedCloseSink) Close() error {
	if s.armed.Load() {
		<-s.gate
	}
	return nil
}

// lostNodePlan is source(3, endless) → key-group hash → sink(3); the sinks
// get sink(i).
func lostNodePlan(sink func(i int) plan.Instance) *plan.Job {
	b := newPlan("lost")
	src := b.source("source", 3, math.MaxInt64)
	snk := b.op("sink", plan.KindSink, 3, func(i int) (plan.Instance, error) { return sink(i), nil })
	b.connect(src, snk, plan.KeyGroupHash).Codec = int64Codec{}
	return b.job
}

// lostNodeRig is a job over the in-process nodes a (coordinator, instance
// 0 of each operator), b (instance 1) and c (instance 2), whose sink on b
// confirms its stop only once the gate opens (after arm).
type lostNodeRig struct {
	t     *testing.T
	job   *Job
	armed atomic.Bool
	cLost atomic.Bool // c's tasks are placed on a from now on
	gate  chan struct{}
	once  sync.Once
}

func startLostNodeRig(t *testing.T) *lostNodeRig {
	t.Helper()
	url := startNATS(t)
	a, _ := clusterNode(t, url, "a")
	b, _ := clusterNode(t, url, "b")
	c, _ := clusterNode(t, url, "c")
	g := &lostNodeRig{t: t, gate: make(chan struct{})}
	t.Cleanup(g.open) // before the nodes shut down (cleanups run last first)
	plain := func(int) plan.Instance { return gatedCloseSink{armed: new(atomic.Bool), gate: g.gate} }
	gated := func(int) plan.Instance { return gatedCloseSink{armed: &g.armed, gate: g.gate} }
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// No checkpoint is ever due: every restart starts the endless source over.
	opts := Options{BatchSize: 256, ChannelCapacity: 4,
		Checkpoint: CheckpointOptions{Mode: barriers.Aligned, Interval: time.Hour, Timeout: time.Hour, Retain: 1, Store: st, FirstID: 1},
		Supervision: SupervisionOptions{MaxRestarts: 10, Window: time.Minute,
			Backoff: supervision.Backoff{Initial: time.Millisecond, Max: time.Millisecond, Multiplier: 1}}}
	for n, sink := range map[*Node]func(int) plan.Instance{b: gated, c: plain} {
		if _, err := n.StartFragment(lostNodePlan(sink), opts); err != nil {
			t.Fatal(err)
		}
	}
	nodes := []string{"a", "b", "c"}
	opts.Cluster = &ClusterOptions{
		Place: func(_ *plan.Operator, i int) (string, error) {
			if i == 2 && g.cLost.Load() {
				return "a", nil
			}
			return nodes[i], nil
		},
		Nodes: func() []string { return nodes },
	}
	if g.job, err = a.Submit(lostNodePlan(plain), opts); err != nil {
		t.Fatal(err)
	}
	g.await("job did not start", func(r RegionDump) bool { return g.job.LocalTasks() == 2 && r.State == "running" })
	return g
}

func (g *lostNodeRig) open() { g.once.Do(func() { close(g.gate) }) }

// loseC arms b's late stop confirmation and declares c lost.
func (g *lostNodeRig) loseC() {
	g.armed.Store(true)
	g.cLost.Store(true)
	g.job.NodeLost("c")
}

// region is the job's only region as the coordinator dumps it.
func (g *lostNodeRig) region() RegionDump {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := g.job.Dump(ctx)
	if err != nil || d.Coordinator == nil || len(d.Coordinator.Regions) != 1 {
		return RegionDump{}
	}
	return d.Coordinator.Regions[0]
}

// dump renders the job's state for a failure message.
func (g *lostNodeRig) dump() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, _ := g.job.Dump(ctx)
	out, _ := json.Marshal(d)
	return string(out)
}

// await polls the region until ok, or fails the test with why.
func (g *lostNodeRig) await(why string, ok func(RegionDump) bool) {
	g.t.Helper()
	if !poll.Until(flowDeadline, 5*time.Millisecond, func() bool { return ok(g.region()) }) {
		select {
		case <-g.job.Done():
			g.t.Fatalf("%s: the job ended: %v", why, g.job.Err())
		default:
		}
		g.t.Fatalf("%s: %s", why, g.dump())
	}
}

// TestNodeLostAgainWhileItsRegionRestores: node c is declared lost; the
// region stops, but b confirms the stop of its sink late, so the region's
// restart is due but still waiting when c is declared lost a second time (it restarted
// quickly: once silent, once back with a new boot). The second loss must
// not count the region's tasks that are already gone as alive again: once b
// confirms, the region restarts and runs. Before the fix the region waited
// forever for tasks that had already ended.
func TestNodeLostAgainWhileItsRegionRestores(t *testing.T) {
	g := startLostNodeRig(t)
	g.loseC()
	// The restart is due but waits (the region stays stopped) for b's sink.
	waiting := func(r RegionDump) bool { return r.State == "stopped" && r.RestartDue && r.Alive == 1 }
	g.await("region did not wait for b's late stop with its restart due", waiting)
	g.job.NodeLost("c")
	if r := g.region(); !waiting(r) {
		t.Fatalf("after the second loss of c the region waits for %d tasks (state %s), want only b's sink: %s", r.Alive, r.State, g.dump())
	}
	g.open()
	g.await("region did not restart once b confirmed its stop", func(r RegionDump) bool { return r.State == "running" })
	if s := g.job.Supervision(); s.Restarts < 1 {
		t.Fatalf("restarts %d, want at least 1", s.Restarts)
	}
	select {
	case <-g.job.Done():
		t.Fatalf("job ended: %v", g.job.Err())
	default:
	}
}

// TestStandInStopsWaitingForAStopNeverConfirmed: b never confirms the stop
// of its sink (the request or its answer lost on the wire); after
// remoteStopWait the stand-in stops waiting and the region restarts. The
// sink's new incarnation on b waits in b's queue until the old one ends;
// then the region runs.
func TestStandInStopsWaitingForAStopNeverConfirmed(t *testing.T) {
	defer func(d time.Duration) { remoteStopWait = d }(remoteStopWait)
	remoteStopWait = 200 * time.Millisecond
	g := startLostNodeRig(t)
	g.loseC()
	g.await("region did not restart without b's confirmation", func(r RegionDump) bool {
		return r.State == "restoring" && r.Alive == 0 && r.Readying > 0
	})
	g.open()
	g.await("region did not run once b's old sink ended", func(r RegionDump) bool { return r.State == "running" })
}
