package placement

import (
	"fmt"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
)

// TaskID is instance i of operator op.
func TaskID(op *plan.Operator, i int) task.ID {
	return task.ID{Operator: op.Name, OperatorID: op.ID, Instance: i}
}

// Pipelines groups the task instances of a job the way Flink's default slot
// sharing does: instance i of every operator of a connected dataflow gets
// the group "<first op>#i", so placement keeps pipeline i (keycount's
// source[i], count[i] and sink[i]) on one node. Records of a forward edge
// then never leave the node, and a key-partitioned edge of parallelism p
// sends only (p-1)/p of its records across nodes.
func Pipelines(p *plan.Job) map[task.ID]string {
	index := make(map[*plan.Operator]int, len(p.Operators))
	for i, op := range p.Operators {
		index[op] = i
	}
	uf := plan.NewUnionFind(len(p.Operators))
	for _, e := range p.Edges {
		uf.Union(index[e.From], index[e.To])
	}
	groups := map[task.ID]string{}
	for i, op := range p.Operators {
		first := p.Operators[uf.Find(i)]
		for inst := 0; inst < op.Parallelism; inst++ {
			groups[TaskID(op, inst)] = fmt.Sprintf("%s#%d", first.Name, inst)
		}
	}
	return groups
}

// PlaceJob places every task of job p (named name) over nodes, the job's
// pipelines together, counting the slots the job's own running tasks hold
// as free: a submission or a takeover replaces all of them. local is the
// state location (nil: none known).
func PlaceJob(name string, p *plan.Job, nodes []cluster.Heartbeat, local map[task.ID][]Copy) (map[task.ID]string, error) {
	var tasks []task.ID
	for _, op := range p.Operators {
		for i := 0; i < op.Parallelism; i++ {
			tasks = append(tasks, TaskID(op, i))
		}
	}
	return Assign(Input{Tasks: tasks, Nodes: JobSlots(nodes, name), Groups: Pipelines(p), Local: local})
}
