package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/state"
)

// FreezeGroups takes groups off this instance for a handoff
// (plan.GroupFreezer): they are frozen with a copy-on-write snapshot, so the
// encoding runs on another goroutine while the task processes the groups
// that stay, and this instance owns them no more (a record of one is a
// routing error, so nothing here writes them again).
func (t *keyedInstance[T, K, Out]) FreezeGroups(groups []int) (plan.FrozenGroups, error) {
	var stateful []int
	for _, g := range groups {
		if g < 0 || g >= len(t.owners) || int(t.owners[g]) != t.ctx.instance {
			return nil, fmt.Errorf("operator %q instance %d: freeze key group %d, which it does not own", t.name, t.ctx.instance, g)
		}
		if t.backend.GroupLen(g) > 0 {
			stateful = append(stateful, g)
		}
	}
	snap, err := t.backend.SnapshotAsync(stateful)
	if err != nil {
		return nil, fmt.Errorf("operator %q: freeze key groups %v: %w", t.name, groups, err)
	}
	for _, g := range groups {
		t.owners[g] = notOwned
	}
	return &frozenKeyed{name: t.name, groups: groups, snap: snap, backend: t.backend}, nil
}

// frozenKeyed is key groups of a keyed instance frozen for a handoff.
type frozenKeyed struct {
	name    string
	groups  []int
	snap    *state.AsyncSnapshot
	backend *state.Backend
}

// Encode returns the frozen groups' blobs; any goroutine.
func (f *frozenKeyed) Encode() (map[int][]byte, error) {
	blobs, err := f.snap.Encode()
	if err != nil {
		return nil, fmt.Errorf("operator %q: encode key groups %v for their handoff: %w", f.name, f.groups, err)
	}
	return blobs, nil
}

// Drop releases the view and drops the groups' state; on the task's
// goroutine.
func (f *frozenKeyed) Drop() {
	f.snap.Release(f.backend)
	for _, g := range f.groups {
		f.backend.DropGroup(g)
	}
}
