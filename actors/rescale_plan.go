package actors

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/rescale"
)

// clonePlan copies p's operators and edges (not their functions or tables,
// which are never changed in place), so a rescale can shape the next plan
// while tasks read the current one.
func clonePlan(p *plan.Job) *plan.Job {
	c := &plan.Job{Name: p.Name, MaxParallelism: p.MaxParallelism}
	ops := make(map[*plan.Operator]*plan.Operator, len(p.Operators))
	for _, op := range p.Operators {
		cp := *op
		cp.Inputs, cp.Outputs = nil, nil
		ops[op] = &cp
		c.Operators = append(c.Operators, &cp)
	}
	for _, e := range p.Edges {
		ce := *e
		ce.From, ce.To = ops[e.From], ops[e.To]
		c.Edges = append(c.Edges, &ce)
	}
	edges := make(map[*plan.Edge]*plan.Edge, len(p.Edges))
	for i, e := range p.Edges {
		edges[e] = c.Edges[i]
	}
	for _, op := range p.Operators {
		cp := ops[op]
		for _, e := range op.Inputs {
			cp.Inputs = append(cp.Inputs, edges[e])
		}
		for _, e := range op.Outputs {
			cp.Outputs = append(cp.Outputs, edges[e])
		}
	}
	return c
}

// inputIndex is the index of edge among its consumer's Inputs.
func inputIndex(edge *plan.Edge) int {
	for i, e := range edge.To.Inputs {
		if e == edge {
			return i
		}
	}
	return -1
}

// outputIndex is the index of edge among its producer's Outputs.
func outputIndex(edge *plan.Edge) int {
	for i, e := range edge.From.Outputs {
		if e == edge {
			return i
		}
	}
	return -1
}

// rescaleTopology is the job's topology as a rescale plans it: with
// checkpoints, its sinks that stage output per checkpoint are marked, and
// those of them that hand their staged output off, so the planner lets
// them grow, and shrink only if they hand off.
func (a *jobActor) rescaleTopology() (rescale.Topology, error) {
	topo := rescale.TopologyOf(a.job.Plan)
	for _, op := range a.job.Plan.Operators {
		for i := range topo.Operators {
			if topo.Operators[i].Name == op.Name {
				topo.Operators[i].MaxInstances, topo.Operators[i].Bound = maxInstances(op, a.ckpt != nil)
			}
		}
	}
	if a.ckpt == nil {
		return topo, nil
	}
	var staging, handOff []string
	for _, op := range a.job.Plan.Operators {
		if op.Kind != plan.KindSink {
			continue
		}
		stages, hands, err := stagesOutput(op)
		if err != nil {
			return rescale.Topology{}, fmt.Errorf("rescale: sink %q: %w", op.Name, err)
		}
		if stages {
			staging = append(staging, op.Name)
		}
		if stages && hands {
			handOff = append(handOff, op.Name)
		}
	}
	return topo.WithStagedOutput(staging...).WithHandOff(handOff...), nil
}

// stagesOutput reports whether sink op's instances stage their output per
// checkpoint, and whether they can hand it to another instance. It asks an
// instance made for the purpose (never opened): a sink's constructor only
// builds the value, Open acquires resources.
func stagesOutput(op *plan.Operator) (stages, handsOff bool, err error) {
	if op.New == nil {
		return false, false, errors.New("no constructor")
	}
	inst, err := op.New(0)
	if err != nil {
		return false, false, err
	}
	h, ok := inst.(plan.StagedHandoff)
	handsOff = ok && h.HandsOff()
	if s, ok := inst.(plan.OutputStager); ok {
		return s.StagesOutput(), handsOff, nil
	}
	_, twoPhase := inst.(plan.TwoPhaseSink)
	return twoPhase, handsOff, nil
}

// rescaleUncovered reports whether a rescale committed since the newest
// completed checkpoint was triggered. That checkpoint was taken with the
// failover regions of the plan before the rescale, which may join tasks the
// new plan's regions separate (a channel between them carried records
// after it): restoring one new region from it would lose or repeat those
// records, so until a checkpoint taken after the commit completes a failure
// restarts every region.
func (a *jobActor) rescaleUncovered() bool {
	if a.rs == nil || !a.rs.committed || a.ckpt == nil {
		return false
	}
	done := a.ckpt.coord.Completed()
	return len(done) == 0 || done[len(done)-1] <= a.rs.committedAfter
}

// rescaleParticipants is the tasks that take part in rescale p
// (rescale.Participants over the job's failover regions now).
func (a *jobActor) rescaleParticipants(p *rescale.Plan) map[taskid.ID]bool {
	regions := make([][]rescale.TaskKey, 0, len(a.topo.Regions))
	for _, r := range a.topo.Regions {
		keys := make([]rescale.TaskKey, 0, len(r.Tasks))
		for _, t := range r.Tasks {
			keys = append(keys, taskKey(t))
		}
		regions = append(regions, keys)
	}
	keys := rescale.Participants(p, regions)
	part := map[taskid.ID]bool{}
	for _, op := range a.rs.run.next.Operators {
		for i := 0; i < max(op.Parallelism, a.job.Plan.Operators[op.ID].Parallelism); i++ {
			if id := taskID(op, i); keys[taskKey(id)] {
				part[id] = true
			}
		}
	}
	return part
}
