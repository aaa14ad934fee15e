package actors

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/store"
)

// removedStaged is the checkpoint state of the sink instances that a
// restore at fewer instances removes and whose staged output instance
// takes over (rescale.StagedOwner, as in a live rescale), ascending. It is
// nil for an operator that is not a sink or runs at no fewer instances.
func removedStaged(m *store.Manifest, op *plan.Operator, instance int) []*store.TaskSnapshot {
	if op.Kind != plan.KindSink || m.Parallelism[op.Name] <= op.Parallelism {
		return nil
	}
	var out []*store.TaskSnapshot
	for r := op.Parallelism; r < m.Parallelism[op.Name]; r++ {
		if rescale.StagedOwner(r, op.Parallelism) != instance {
			continue
		}
		if ts, ok := findTaskSnapshot(m, op.Name, r); ok && ts.OperatorState != nil {
			out = append(out, ts)
		}
	}
	return out
}

// recoverRemovedStaged lets the task's sink recover each removed
// instance's checkpoint state in states (removedStaged's, in its order).
func (t *task) recoverRemovedStaged(id uint64, removed []*store.TaskSnapshot, states [][]byte) error {
	if len(removed) == 0 {
		return nil
	}
	h, ok := t.inst.(plan.StagedHandoff)
	if !ok || !h.HandsOff() {
		return fmt.Errorf("sink instance %T cannot recover the staged output of instance %d", t.inst, removed[0].Instance)
	}
	for i, ts := range removed {
		if err := h.RecoverHandedOff(id, states[i]); err != nil {
			return fmt.Errorf("staged output of removed instance %d: %w", ts.Instance, err)
		}
	}
	return nil
}

// sinkHandsOff reports whether op is a sink whose instances hand their
// staged output off (a restore may then run it at fewer instances).
func sinkHandsOff(op *plan.Operator) bool {
	if op.Kind != plan.KindSink {
		return false
	}
	_, hands, err := stagesOutput(op)
	return err == nil && hands
}
