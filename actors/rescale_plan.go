package actors

import (
	"github.com/weirstream/weir/internal/plan"
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
