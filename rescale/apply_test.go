package rescale

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

func TestApplySetsParallelismTablesAndPartitioners(t *testing.T) {
	tab, _ := keygroups.Contiguous(128, 2)
	src := &plan.Operator{ID: 0, Name: "source", Kind: plan.KindSource, Parallelism: 2}
	count := &plan.Operator{ID: 1, Name: "count", Kind: plan.KindTransform, Parallelism: 2, Keyed: true, Table: tab}
	sink := &plan.Operator{ID: 2, Name: "sink", Kind: plan.KindSink, Parallelism: 2}
	j := &plan.Job{Name: "keycount", MaxParallelism: 128, Operators: []*plan.Operator{src, count, sink},
		Edges: []*plan.Edge{{From: src, To: count, Partitioner: plan.KeyGroupHash}, {From: count, To: sink, Partitioner: plan.Forward, Implicit: true}}}
	p := mustPlan(t, Input{Seq: 1, Topology: TopologyOf(j), Request: []Target{{"count", 3}}})
	if err := p.Apply(j); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Change("count")
	if count.Parallelism != 3 || !count.Table.Equal(c.New) || count.Table.Epoch != 1 {
		t.Fatalf("count at %d with table %+v, want 3 with the plan's", count.Parallelism, count.Table)
	}
	if j.Edges[1].Partitioner != plan.Rebalance || j.Edges[0].Partitioner != plan.KeyGroupHash {
		t.Fatalf("partitioners %v %v, want hash and rebalance", j.Edges[0].Partitioner, j.Edges[1].Partitioner)
	}
	// Applied twice, the plan no longer fits: nothing changes.
	if err := p.Apply(j); err == nil || !strings.Contains(err.Error(), `operator "count" runs at 3, the plan rescales it from 2`) {
		t.Fatalf("second apply: %v", err)
	}
	if count.Parallelism != 3 {
		t.Fatalf("refused apply changed parallelism to %d", count.Parallelism)
	}
}
