package actors

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/store"
)

// broadcastPlanJob is source(2) →broadcast→ claim(p) →implicit→ sink(1).
func broadcastPlanJob(t *testing.T, p int) *plan.Job {
	t.Helper()
	src := &plan.Operator{ID: 0, Name: "source", Kind: plan.KindSource, Parallelism: 2}
	claim := &plan.Operator{ID: 1, Name: "claim", Kind: plan.KindTransform, Parallelism: p}
	snk := &plan.Operator{ID: 2, Name: "sink", Kind: plan.KindSink, Parallelism: 1}
	writer := func(cfg plan.WriterConfig) (plan.EdgeWriter, error) {
		return plan.NewWriter(cfg, func(v any) uint32 { return keygroups.HashKey(v.(string)) }, nil)
	}
	e0 := &plan.Edge{ID: 0, From: src, To: claim, Partitioner: plan.Broadcast, NewWriter: writer}
	e1 := &plan.Edge{ID: 1, From: claim, To: snk, Partitioner: plan.ImplicitPartitioner(p, 1), Implicit: true, NewWriter: writer}
	src.Outputs, claim.Inputs, claim.Outputs, snk.Inputs = []*plan.Edge{e0}, []*plan.Edge{e0}, []*plan.Edge{e1}, []*plan.Edge{e1}
	j := &plan.Job{Name: "bc", MaxParallelism: 16, Operators: []*plan.Operator{src, claim, snk}, Edges: []*plan.Edge{e0, e1}}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	return j
}

// withChannelState gives instance 1 of op buffers on its input channel in.
func withChannelState(m *store.Manifest, op string, in int) {
	for i := range m.Tasks {
		if m.Tasks[i].Operator == op && m.Tasks[i].Instance == 1 {
			m.Tasks[i].Channels = append(m.Tasks[i].Channels, store.ChannelBlob{Input: in, Buffers: 3, Records: 30})
		}
	}
}

// TestPlanRestoreRefusesRescalingBroadcastChannelState: an operator behind
// a broadcast edge whose checkpoint holds channel state on that edge keeps
// its parallelism (a new one is refused, naming the edge and the way out);
// without such state, or at the same parallelism, it restores; channel
// state on a key-group hash edge rescales.
func TestPlanRestoreRefusesRescalingBroadcastChannelState(t *testing.T) {
	m := manifestOf(broadcastPlanJob(t, 2))
	if _, err := PlanRestore(broadcastPlanJob(t, 3), m); err != nil {
		t.Fatalf("no channel state: %v", err)
	}
	withChannelState(m, "claim", 1) // from source instance 1
	_, err := PlanRestore(broadcastPlanJob(t, 3), m)
	for _, want := range []string{`operator "claim"`, `broadcast input from "source"`, "instance 1, 3 buffers", "restore it at parallelism 2, or from an aligned checkpoint"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("rescaled with broadcast channel state: error %v, want one containing %q", err, want)
		}
	}
	if _, err := PlanRestore(broadcastPlanJob(t, 2), m); err != nil {
		t.Fatalf("same parallelism with broadcast channel state: %v", err)
	}
	keyed := manifestOf(restorePlanJob(t, 2))
	withChannelState(keyed, "count", 1)
	if _, err := PlanRestore(restorePlanJob(t, 3), keyed); err != nil {
		t.Fatalf("channel state on a key-group hash edge: %v", err)
	}
}
