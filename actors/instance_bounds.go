package actors

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// maxInstances is sink op's bound on its instances (0: none) and why. It
// asks an instance made for the purpose (never opened), as stagesOutput does.
func maxInstances(op *plan.Operator, checkpointing bool) (int, string) {
	if op.Kind != plan.KindSink || op.New == nil {
		return 0, ""
	}
	inst, err := op.New(0)
	if err != nil {
		return 0, ""
	}
	if b, ok := inst.(plan.InstanceBound); ok {
		return b.MaxInstances(checkpointing)
	}
	return 0, ""
}

// checkInstanceBounds refuses a job whose sink runs with more instances
// than it supports, before anything starts (otherwise every instance's Open
// would fail and the job restart until it gives up).
func checkInstanceBounds(p *plan.Job, checkpointing bool) error {
	for _, op := range p.Operators {
		if limit, why := maxInstances(op, checkpointing); limit > 0 && op.Parallelism > limit {
			return fmt.Errorf("job %q, operator %q: %s, not %d", p.Name, op.Name, why, op.Parallelism)
		}
	}
	return nil
}
