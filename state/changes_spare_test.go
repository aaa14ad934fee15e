package state

import (
	"strconv"
	"testing"
)

// TestChangeListsOfMostChangedGroupsAreReused: where every key changes
// between checkpoints, a group's list of noted keys is dropped once most
// of its keys are noted; the next record takes it again instead of growing
// a new one by doubling, so noting allocates nothing from the second
// record on. The groups that still list keys (not most changed) list
// exactly the keys noted in their own record.
func TestChangeListsOfMostChangedGroupsAreReused(t *testing.T) {
	const groups, perGroup = 4, 1000
	vt := NewValueTable[int64]("v", groups)
	k := &vt.core
	keys := make([][]string, groups)
	for g := range groups {
		for i := range perGroup {
			key := "g" + strconv.Itoa(g) + "k" + strconv.Itoa(i)
			keys[g] = append(keys[g], key)
			vt.Put(g, key, 1)
		}
	}
	k.trackChanges(true, false)
	updateAll := func() { // group by group in turn, as keys come: every group's list in use at once
		for i := range perGroup {
			for g := range groups {
				vt.Put(g, keys[g][i], 2)
			}
		}
	}
	updateAll()
	if _, most := k.takeChanges(); !most[0] || !most[groups-1] {
		t.Fatalf("every key changed: most %v, want every group", most)
	}
	if allocs := testing.AllocsPerRun(3, func() {
		updateAll()
		k.takeChanges()
	}); allocs > 3*1 { // takeChanges' own three lists
		t.Errorf("noting every key of %d groups allocated %v times per record, want only takeChanges' 3", groups, allocs)
	}
	// A record in which a few keys of group 1 change lists those alone,
	// none of the spare's earlier keys.
	vt.Put(1, keys[1][7], 3)
	vt.Put(1, keys[1][9], 3)
	listed, most := k.takeChanges()
	if most[1] || len(listed[1]) != 2 || listed[1][0] != keys[1][7] || listed[1][1] != keys[1][9] {
		t.Fatalf("group 1 after changing 2 keys: listed %q, most %v", listed[1], most[1])
	}
	if len(k.changes.spare) != groups-1 {
		t.Fatalf("%d spare lists after group 1 took one, want %d", len(k.changes.spare), groups-1)
	}
	for _, s := range k.changes.spare {
		for _, key := range s[:cap(s)] {
			if key != "" {
				t.Fatalf("a spare list holds key %q", key)
			}
		}
	}
}
