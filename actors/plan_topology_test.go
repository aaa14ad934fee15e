package actors

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// TestTopologyOf: one function gives the job actor's per-task arrays, the
// checkpoint coordinator's tasks, sources and sinks, and the regions, all
// from the plan; a plan at another parallelism gives them at that one.
func TestTopologyOf(t *testing.T) {
	build := func(srcP, mapP, sinkP int, mapToSink plan.Partitioner) *plan.Job {
		b := newPlan("topo")
		src := b.source("src", srcP, 10)
		m := b.op("map", plan.KindTransform, mapP, func(int) (plan.Instance, error) { return identity{}, nil })
		sink := b.op("sink", plan.KindSink, sinkP, func(int) (plan.Instance, error) { return discard{}, nil })
		b.connect(src, m, plan.Forward)
		b.connect(m, sink, mapToSink)
		return b.job
	}
	tests := []struct {
		name                           string
		p                              *plan.Job
		tasks, sources, sinks, regions string
	}{
		{"forward pipelines", build(2, 2, 2, plan.Forward),
			"[src[0] src[1] map[0] map[1] sink[0] sink[1]]", "[src[0] src[1]]", "[sink[0] sink[1]]",
			"[src[0] map[0] sink[0]] [src[1] map[1] sink[1]]"},
		{"rescaled sink behind a shuffle", build(2, 2, 3, plan.Shuffle),
			"[src[0] src[1] map[0] map[1] sink[0] sink[1] sink[2]]", "[src[0] src[1]]", "[sink[0] sink[1] sink[2]]",
			"[src[0] src[1] map[0] map[1] sink[0] sink[1] sink[2]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topo := topologyOf(tt.p)
			if got := fmt.Sprint(topo.Tasks); got != tt.tasks {
				t.Errorf("tasks %s, want %s", got, tt.tasks)
			}
			if got := fmt.Sprint(topo.Sources); got != tt.sources {
				t.Errorf("sources %s, want %s", got, tt.sources)
			}
			if got := fmt.Sprint(topo.Sinks); got != tt.sinks {
				t.Errorf("sinks %s, want %s", got, tt.sinks)
			}
			var regions []string
			for _, r := range topo.Regions {
				regions = append(regions, fmt.Sprint(r.Tasks))
			}
			if got := fmt.Sprint(regions); got != "["+tt.regions+"]" {
				t.Errorf("regions %s, want [%s]", got, tt.regions)
			}
			tasks, inputs := taskSlots(tt.p)
			n := 0
			for _, op := range tt.p.Operators {
				if len(tasks[op.ID]) != op.Parallelism || len(inputs[op.ID]) != op.Parallelism {
					t.Errorf("%s: %d task slots, %d input slots, want %d", op.Name, len(tasks[op.ID]), len(inputs[op.ID]), op.Parallelism)
				}
				n += len(tasks[op.ID])
			}
			if n != len(topo.Tasks) {
				t.Errorf("%d task slots for %d tasks", n, len(topo.Tasks))
			}
		})
	}
}
