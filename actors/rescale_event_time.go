package actors

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
)

// rescaleReleased tells an operator that tracks moved key groups
// (plan.GroupReleaser) that group g is released: its records are
// processed, and its event-time timers may fire.
func (t *task) rescaleReleased(g int) {
	r, ok := t.inst.(plan.GroupReleaser)
	if !ok {
		return
	}
	if err := r.ReleaseGroups([]int{g}, &t.out); err != nil {
		t.fail(fmt.Errorf("rescale: release key group %d: %w", g, err))
	}
}

// rescaleHoldLeaving tells an operator that tracks moved key groups
// (plan.GroupReleaser) which of its groups leave: their watermark stays
// where it is now, before any producer has switched, until they leave. The
// marks it takes after a producer's switch follow records of those groups
// that go to the new owner instead, and must not make them late there or
// fire their timers here before records set aside for them are processed.
func (t *task) rescaleHoldLeaving(cfg rescale.TaskConfig) {
	r, ok := t.inst.(plan.GroupReleaser)
	if !ok || len(cfg.Out) == 0 {
		return
	}
	groups := make([]int, 0, len(cfg.Out))
	for _, m := range cfg.Out {
		groups = append(groups, m.Group)
	}
	r.HoldGroups(groups)
}
