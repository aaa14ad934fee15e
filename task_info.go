package weir

import (
	"slices"

	"github.com/weirstream/weir/internal/plan"
)

// TaskInfo tells an operator instance (a source, a sink, a keyed function)
// who it is.
type TaskInfo struct {
	// Job and Operator name the job and the operator.
	Job, Operator string
	// Instance is this instance's index among the operator's Parallelism.
	Instance, Parallelism int
	// MaxParallelism is the job's number of key groups.
	MaxParallelism int
	// KeyGroups lists the key groups this instance owns when it starts
	// (keyed operators only; a live rescale may move some later).
	KeyGroups []int
	// Checkpointing is true when the job takes checkpoints (sinks then stage
	// output and make it visible only for completed checkpoints).
	Checkpointing bool
	// Restoring is true when the instance resumes from a checkpoint.
	Restoring bool
}

// taskInfoOf is the runtime's task description as the public API shows it.
func taskInfoOf(p plan.TaskInfo) TaskInfo {
	return TaskInfo{Job: p.Job, Operator: p.Operator, Instance: p.Instance, Parallelism: p.Parallelism,
		MaxParallelism: p.MaxParallelism, KeyGroups: slices.Clone(p.KeyGroups),
		Checkpointing: p.Checkpointing, Restoring: p.Restoring}
}

// Split is one part of a source's input and how far it was read: split ID of
// the Of splits the source was cut into, at Offset.
type Split struct {
	ID, Of int
	Offset int64
}

// splitsOf converts the runtime's splits to the public type, and back.
func splitsOf(s []plan.Split) []Split {
	out := make([]Split, len(s))
	for i, sp := range s {
		out[i] = Split{ID: sp.ID, Of: sp.Of, Offset: sp.Offset}
	}
	return out
}

func planSplits(s []Split) []plan.Split {
	out := make([]plan.Split, len(s))
	for i, sp := range s {
		out[i] = plan.Split{ID: sp.ID, Of: sp.Of, Offset: sp.Offset}
	}
	return out
}
