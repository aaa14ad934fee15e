package placement_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/graphplan"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/samples/wordcount"
)

// TestPipelines: instance i of every operator of a connected job forms one
// group, across forward and key-partitioned edges alike, as Flink's default
// slot sharing puts subtask i of each operator into slot i.
func TestPipelines(t *testing.T) {
	p := mustPlan(t)(keycount.Build(keycount.Config{Records: 10, Keys: 2, Parallelism: 2}))
	if got, want := placement.Pipelines(p), pipelineGroups(t, p, 2, "source", "count", "sink"); !maps.Equal(got, want) {
		t.Fatalf("keycount pipelines %v, want %v", got, want)
	}
	wp := mustPlan(t)(wordcount.Build(wordcount.Config{Records: 10, Parallelism: 2}))
	// source →forward→ split →hash→ count →forward→ sink: one pipeline per instance.
	if got, wantWC := placement.Pipelines(wp), pipelineGroups(t, wp, 2, "source", "split", "count", "sink"); !maps.Equal(got, wantWC) {
		t.Fatalf("wordcount pipelines %v, want %v", got, wantWC)
	}
}

// mustPlan returns a function that plans a built graph or fails t.
func mustPlan(t *testing.T) func(*weir.Graph, error) *plan.Job {
	return func(g *weir.Graph, err error) *plan.Job {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		p, err := graphplan.Of(g)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// pipelineGroups is the grouping pipelines should give ops, the first of
// which is the job's first operator, at parallelism p.
func pipelineGroups(t *testing.T, job *plan.Job, p int, ops ...string) map[task.ID]string {
	want := map[task.ID]string{}
	for i := range p {
		for _, op := range ops {
			want[named(t, job, op, i)] = fmt.Sprintf("%s#%d", ops[0], i)
		}
	}
	return want
}

// TestPlaceAllKeepsPipelinesTogether: keycount at parallelism 2 over three
// nodes puts pipeline i on one node and the two pipelines on different nodes.
func TestPlaceAllKeepsPipelinesTogether(t *testing.T) {
	p := mustPlan(t)(keycount.Build(keycount.Config{Records: 10, Keys: 2, Parallelism: 2}))
	placed, err := placement.PlaceJob("keycount", p, []cluster.Heartbeat{{Node: "n1", Slots: 8}, {Node: "n2", Slots: 8}, {Node: "n3", Slots: 8}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var homes []string
	for i := range 2 {
		home := placed[named(t, p, "source", i)]
		for _, op := range []string{"count", "sink"} {
			if n := placed[named(t, p, op, i)]; n != home {
				t.Fatalf("%s[%d] on %s, source[%d] on %s: pipeline %d split (%v)", op, i, n, i, home, i, placed)
			}
		}
		homes = append(homes, home)
	}
	if homes[0] == homes[1] {
		t.Fatalf("both pipelines on %s: %v", homes[0], placed)
	}
}

// TestPipelineNode: a task whose node died follows the first task of its
// pipeline already re-placed on a live node with room; otherwise there is
// no preference.
func TestPipelineNode(t *testing.T) {
	groups := map[task.ID]string{
		{Operator: "source", Instance: 1}: "source#1",
		{Operator: "count", Instance: 1}:  "source#1",
		{Operator: "sink", Instance: 1}:   "source#1",
		{Operator: "count", Instance: 0}:  "source#0",
	}
	placed := map[task.ID]string{
		{Operator: "source", Instance: 1}: "n3", // re-placed already
		{Operator: "count", Instance: 1}:  "n2", // on the dead node
		{Operator: "sink", Instance: 1}:   "n2",
		{Operator: "count", Instance: 0}:  "n1",
	}
	free := map[string]int{"n1": 5, "n3": 7}
	if got := placement.PipelineNode(groups, placed, task.ID{Operator: "count", Instance: 1}, free); got != "n3" {
		t.Fatalf("count[1] goes to %q, want n3 (where source[1] went)", got)
	}
	free["n3"] = 0
	if got := placement.PipelineNode(groups, placed, task.ID{Operator: "count", Instance: 1}, free); got != "" {
		t.Fatalf("count[1] goes to full node %q, want no preference", got)
	}
	if got := placement.PipelineNode(groups, placed, task.ID{Operator: "count", Instance: 0}, free); got != "" {
		t.Fatalf("count[0], alone in its pipeline, goes to %q, want no preference", got)
	}
}

// TestFreeSlotsDuringARegionRestart: while a region restarts, the
// coordinator's node reports no used slots in its heartbeat, but pipeline 0
// is placed there again; a task of the dead node's pipeline 1 goes to the
// idle node n3, not back onto the coordinator's.
func TestFreeSlotsDuringARegionRestart(t *testing.T) {
	placed := map[task.ID]string{
		{Operator: "source", Instance: 0}: "n1", {Operator: "count", Instance: 0}: "n1", {Operator: "sink", Instance: 0}: "n1",
		{Operator: "source", Instance: 1}: "n2", {Operator: "count", Instance: 1}: "n2", {Operator: "sink", Instance: 1}: "n2",
	}
	eligible := map[string]cluster.Heartbeat{"n1": {Node: "n1", Slots: 8, Used: 0}, "n3": {Node: "n3", Slots: 8, Used: 1}}
	ref := task.ID{Operator: "source", Instance: 1}
	free, slots := placement.FreeSlots("keycount", []string{"n1", "n2", "n3"}, eligible, placed, ref)
	if !maps.Equal(free, map[string]int{"n1": 5, "n3": 7}) {
		t.Fatalf("free slots %v, want n1: 5 (its heartbeat's 0 used is stale), n3: 7", free)
	}
	got, err := placement.Place([]task.ID{ref}, slots, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[ref] != "n3" {
		t.Fatalf("source[1] placed on %s, want n3", got[ref])
	}
	// A heartbeat that still counts the job's tasks being restarted: they
	// are the job's own, so only the tasks placed there count.
	eligible["n1"] = cluster.Heartbeat{Node: "n1", Slots: 8, Used: 7, Tasks: map[string]int{"keycount": 6}}
	free, _ = placement.FreeSlots("keycount", []string{"n1", "n2", "n3"}, eligible, placed, ref)
	if !maps.Equal(free, map[string]int{"n1": 4, "n3": 7}) {
		t.Fatalf("free slots %v, want n1: 4 (8 less 1 of another job and 3 of pipeline 0), n3: 7", free)
	}
}

// named is instance i of the operator of job p called op.
func named(t *testing.T, p *plan.Job, op string, i int) task.ID {
	t.Helper()
	for _, o := range p.Operators {
		if o.Name == op {
			return placement.TaskID(o, i)
		}
	}
	t.Fatalf("job %s has no operator %s", p.Name, op)
	return task.ID{}
}
