package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/supervision"
)

// planTopology is what a plan's shape gives the job actor and its state
// machines: every task, the sources and sinks among them, and the failover
// regions.
// Built by topologyOf from the plan; the job actor sizes its per-task arrays
// from it, and the checkpoint coordinator and the supervisor are created (or
// rebuilt, at a checkpoint boundary) from it.
type planTopology struct {
	Tasks   []taskid.ID // by operator, then instance
	Sources []taskid.ID
	Sinks   []taskid.ID
	Regions []supervision.Region
}

// topologyOf builds the planTopology of plan p.
func topologyOf(p *plan.Job) planTopology {
	t := planTopology{Regions: supervision.Regions(p)}
	for _, op := range p.Operators {
		for i := 0; i < op.Parallelism; i++ {
			id := taskID(op, i)
			t.Tasks = append(t.Tasks, id)
			switch op.Kind {
			case plan.KindSource:
				t.Sources = append(t.Sources, id)
			case plan.KindSink:
				t.Sinks = append(t.Sinks, id)
			}
		}
	}
	return t
}

// taskSlots returns the job actor's per-task arrays for plan p, sized from
// its operators' parallelism: task actors [operator][instance] and their
// input channel actors [operator][instance][input].
func taskSlots(p *plan.Job) ([][]*actor.PID, [][][]*actor.PID) {
	tasks := make([][]*actor.PID, len(p.Operators))
	inputs := make([][][]*actor.PID, len(p.Operators))
	for _, op := range p.Operators {
		tasks[op.ID] = make([]*actor.PID, op.Parallelism)
		inputs[op.ID] = make([][]*actor.PID, op.Parallelism)
	}
	return tasks, inputs
}
