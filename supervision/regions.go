package supervision

import (
	"cmp"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
)

// Region is a set of task instances that must restart together: a connected
// component of the job's pipelined channels (Flink's pipelined region).
type Region struct {
	ID    int
	Tasks []task.ID
}

// Regions splits a job's task instances into pipelined regions. Two instances
// share a region when a channel connects them: a forward edge connects
// producer instance i with consumer instance i only; rebalance, shuffle,
// broadcast and key-group hash edges connect every producer instance with
// every consumer instance. A forward edge between operators of different
// parallelism (which plan.Validate rejects) is treated as all-to-all, the
// safe side. Tasks in a region are ordered by operator id then instance, and
// regions by their first task; a region's ID is its index.
func Regions(j *plan.Job) []Region {
	if j == nil {
		return nil
	}
	ops, index := collectOperators(j)
	base := make([]int, len(ops)+1)
	for i, op := range ops {
		base[i+1] = base[i] + max(op.Parallelism, 0)
	}
	uf := plan.NewUnionFind(base[len(ops)])
	for _, e := range allEdges(j) {
		f, t := index[e.From], index[e.To]
		pf, pt := max(ops[f].Parallelism, 0), max(ops[t].Parallelism, 0)
		if pf == 0 || pt == 0 {
			continue
		}
		if e.Partitioner == plan.Forward && pf == pt {
			for i := range pf {
				uf.Union(base[f]+i, base[t]+i)
			}
			continue
		}
		for i := range pf {
			uf.Union(base[f], base[f]+i)
		}
		for i := range pt {
			uf.Union(base[f], base[t]+i)
		}
	}

	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ops[a].ID, ops[b].ID) })

	var regions []Region
	regionOfRoot := map[int]int{}
	for _, oi := range order {
		op := ops[oi]
		for inst := range max(op.Parallelism, 0) {
			root := uf.Find(base[oi] + inst)
			r, ok := regionOfRoot[root]
			if !ok {
				r = len(regions)
				regionOfRoot[root] = r
				regions = append(regions, Region{ID: r})
			}
			regions[r].Tasks = append(regions[r].Tasks, task.ID{Operator: op.Name, OperatorID: op.ID, Instance: inst})
		}
	}
	return regions
}

// RegionOf returns the ID of the region holding instance of operator op.
func RegionOf(regions []Region, op string, instance int) (int, bool) {
	for _, r := range regions {
		for _, t := range r.Tasks {
			if t.Operator == op && t.Instance == instance {
				return r.ID, true
			}
		}
	}
	return 0, false
}

// collectOperators lists the job's operators, then any operator reached only
// through an edge, each once, with its position.
func collectOperators(j *plan.Job) ([]*plan.Operator, map[*plan.Operator]int) {
	var ops []*plan.Operator
	index := map[*plan.Operator]int{}
	add := func(op *plan.Operator) {
		if op == nil {
			return
		}
		if _, ok := index[op]; !ok {
			index[op] = len(ops)
			ops = append(ops, op)
		}
	}
	for _, op := range j.Operators {
		add(op)
	}
	for _, e := range allEdges(j) {
		add(e.From)
		add(e.To)
	}
	return ops, index
}

// allEdges returns the job's edges and those listed only on operators; an
// edge may appear twice, which the union-find does not mind.
func allEdges(j *plan.Job) []*plan.Edge {
	var edges []*plan.Edge
	keep := func(es []*plan.Edge) {
		for _, e := range es {
			if e != nil && e.From != nil && e.To != nil {
				edges = append(edges, e)
			}
		}
	}
	keep(j.Edges)
	for _, op := range j.Operators {
		if op != nil {
			keep(op.Inputs)
			keep(op.Outputs)
		}
	}
	return edges
}
