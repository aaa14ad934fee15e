package actors

import (
	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
)

// taskID names instance of op: the identity the actors, the supervision and
// checkpoint state machines share (map keys included).
func taskID(op *plan.Operator, instance int) taskid.ID {
	return taskid.ID{Operator: op.Name, OperatorID: op.ID, Instance: instance}
}

// idOf names instance of the plan's operator with index op.
func (j *Job) idOf(op, instance int) taskid.ID { return taskID(j.Plan.Operators[op], instance) }

// idOf names instance of the plan's operator with index op.
func (a *jobActor) idOf(op, instance int) taskid.ID { return a.job.idOf(op, instance) }

// idOf names instance of the plan's operator with index op.
func (f *fragment) idOf(op, instance int) taskid.ID { return f.job.idOf(op, instance) }
