package weir

import (
	"fmt"
	"maps"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/state"
)

// StageRestore decodes the key groups of snap in parallel on any goroutine
// (plan.RestoreStager): it reads nothing the task changes. Commit checks
// that this instance owns each group and installs them, on the task.
func (t *keyedInstance[T, K, Out]) StageRestore(snap plan.Snapshot) (plan.StagedGroups, error) {
	groups := slices.Sorted(maps.Keys(snap.KeyGroups))
	blobs := make([]state.GroupBlob, 0, len(groups))
	for _, g := range groups {
		crc, known := snap.KeyGroupCRCs[g]
		blobs = append(blobs, state.GroupBlob{Group: g, Blob: snap.KeyGroups[g], CRC: crc, CRCKnown: known})
	}
	staged, err := t.backend.StageRestoreGroups(blobs, snap.KeyGroupsAdopted)
	if err != nil {
		return nil, fmt.Errorf("operator %q: %w", t.name, err)
	}
	return stagedCommit(func() error {
		for _, g := range groups {
			if err := t.checkRestoreOwner(g); err != nil {
				return err
			}
		}
		if err := staged.Commit(); err != nil {
			return fmt.Errorf("operator %q: %w", t.name, err)
		}
		return nil
	}), nil
}

// checkRestoreOwner refuses to restore key group g unless this instance
// owns it.
func (t *keyedInstance[T, K, Out]) checkRestoreOwner(g int) error {
	if g < 0 || g >= len(t.owners) || int(t.owners[g]) != t.ctx.instance {
		owner := -1
		if g >= 0 && g < len(t.owners) {
			owner = int(t.owners[g])
		}
		return fmt.Errorf("operator %q instance %d: asked to restore key group %d owned by instance %d", t.name, t.ctx.instance, g, owner)
	}
	return nil
}
