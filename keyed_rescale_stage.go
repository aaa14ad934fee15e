package weir

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/state"
)

// StageGroups decodes key groups handed off by another instance
// (plan.GroupStager) on any goroutine: it reads nothing the task changes.
// The checks against this instance's own groups wait for Commit, on the
// task.
func (t *keyedInstance[T, K, Out]) StageGroups(groups []int, blobs map[int][]byte) (plan.StagedGroups, error) {
	for g := range blobs {
		if !slices.Contains(groups, g) {
			return nil, fmt.Errorf("operator %q instance %d: state of key group %d, which is not among those handed off", t.name, t.ctx.instance, g)
		}
	}
	staged, err := t.backend.StageGroups(blobs)
	if err != nil {
		return nil, fmt.Errorf("operator %q: import key groups %v: %w", t.name, groups, err)
	}
	return stagedCommit(func() error { return t.importStaged(groups, staged) }), nil
}

// stagedCommit is plan.StagedGroups as the function that commits them.
type stagedCommit func() error

// Commit installs the staged groups.
func (c stagedCommit) Commit() error { return c() }

// importStaged installs staged groups and owns them from now on.
func (t *keyedInstance[T, K, Out]) importStaged(groups []int, staged *state.StagedGroups) error {
	for _, g := range groups {
		if g < 0 || g >= len(t.owners) {
			return fmt.Errorf("operator %q instance %d: import key group %d of %d", t.name, t.ctx.instance, g, len(t.owners))
		}
		if t.backend.GroupLen(g) > 0 {
			return fmt.Errorf("operator %q instance %d: import key group %d, which holds state here already", t.name, t.ctx.instance, g)
		}
	}
	if err := staged.Commit(); err != nil {
		return fmt.Errorf("operator %q: import key groups %v: %w", t.name, groups, err)
	}
	for _, g := range groups {
		t.owners[g] = int32(t.ctx.instance)
	}
	return nil
}
