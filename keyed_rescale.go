package weir

import "fmt"

// notOwned marks a key group in keyedInstance.owners that this instance
// handed off.
const notOwned = -1

// ExportGroups encodes the state of groups and drops it (plan.GroupMover):
// this instance owns them no more.
func (t *keyedInstance[T, K, Out]) ExportGroups(groups []int) (map[int][]byte, error) {
	blobs := map[int][]byte{}
	for _, g := range groups {
		if g < 0 || g >= len(t.owners) || int(t.owners[g]) != t.ctx.instance {
			return nil, fmt.Errorf("operator %q instance %d: export key group %d, which it does not own", t.name, t.ctx.instance, g)
		}
		if t.backend.GroupLen(g) > 0 {
			blob, err := t.backend.SnapshotGroup(g)
			if err != nil {
				return nil, fmt.Errorf("operator %q: export key group %d: %w", t.name, g, err)
			}
			blobs[g] = blob
		}
	}
	for _, g := range groups {
		t.backend.DropGroup(g)
		t.owners[g] = notOwned
	}
	return blobs, nil
}

// ImportGroups loads the state of groups handed off by another instance
// (plan.GroupMover) and owns them from now on: StageGroups and its Commit
// in one.
func (t *keyedInstance[T, K, Out]) ImportGroups(groups []int, blobs map[int][]byte) error {
	staged, err := t.StageGroups(groups, blobs)
	if err != nil {
		return err
	}
	return staged.Commit()
}
