package state

import (
	"fmt"
	"testing"
)

// barrierBlobs returns the synchronous encoding of every non-empty group:
// what an asynchronous snapshot taken now must hold.
func barrierBlobs(t *testing.T, b *Backend) map[int]string {
	t.Helper()
	want := map[int]string{}
	for _, g := range b.NonEmptyGroups() {
		blob, err := b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		want[g] = string(blob)
	}
	return want
}

// snapshotNow takes an asynchronous snapshot of every non-empty group and
// returns it with the bytes it must encode.
func snapshotNow(t *testing.T, b *Backend) (*AsyncSnapshot, map[int]string) {
	t.Helper()
	want := barrierBlobs(t, b)
	snap, err := b.SnapshotAsync(b.NonEmptyGroups())
	if err != nil {
		t.Fatal(err)
	}
	return snap, want
}

// encodeMatches encodes snap and fails unless every group is want's.
func encodeMatches(t *testing.T, snap *AsyncSnapshot, want map[int]string, what string) {
	t.Helper()
	got, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d groups, want %d", what, len(got), len(want))
	}
	for g, w := range want {
		if string(got[g]) != w {
			t.Fatalf("%s: key group %d is not the group at the barrier", what, g)
		}
	}
}

// TestDeleteAfterAChangeInPlaceSnapshotsTheBarrierValue: the task reads a
// key (saving its value in the slot's claim), changes it in place, then
// deletes it before the encoder started the group. The delete records the
// key in the group's overlay, and that must be the value saved at the first
// touch, not the changed one the slot holds when it is deleted.
func TestDeleteAfterAChangeInPlaceSnapshotsTheBarrierValue(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	snap, want := snapshotNow(t, b)
	for i, key := range keys[:64] {
		g := i % 16
		v, _ := vt.Get(g, key)
		v.Value[0]++ // in place
		v.Count++
		vt.Put(g, key, v)
		vt.Delete(g, key)
	}
	encodeMatches(t, snap, want, "deleted after a change in place")
}

// TestAClaimOfTheLastSnapshotIsFreeForTheNext: a value the task saved for
// one snapshot carries that claim into the next, which must still read
// the value live (as changed since), not the saved one of the snapshot
// before.
func TestAClaimOfTheLastSnapshotIsFreeForTheNext(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	first, want := snapshotNow(t, b)
	for i, key := range keys {
		v, _ := vt.Get(i%16, key)
		v.Value[1] += 3
		vt.Put(i%16, key, v)
	}
	encodeMatches(t, first, want, "first snapshot")
	// Untouched after this barrier: the encoder reads every value live.
	second, want := snapshotNow(t, b)
	encodeMatches(t, second, want, "second snapshot")
	// And touched again after the next one: saved anew.
	third, want := snapshotNow(t, b)
	for i, key := range keys {
		v, _ := vt.Get(i%16, key)
		v.Value[2]++
		vt.Put(i%16, key, v)
	}
	encodeMatches(t, third, want, "third snapshot")
}

// TestReaddedKeySnapshotsTheBarrierValue: deleted and put again after the
// barrier, before the encoder started the group, a key's snapshot value is
// the one at the barrier, and a key put for the first time after it is not
// in the snapshot, however often it is read.
func TestReaddedKeySnapshotsTheBarrierValue(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	snap, want := snapshotNow(t, b)
	for i, key := range keys[:32] {
		g := i % 16
		vt.Delete(g, key)
		vt.Put(g, key, snapEntry{Count: -1, Value: []byte("new")})
		v, _ := vt.Get(g, key)
		v.Value[0] = 'N'
		vt.Put(g, "fresh"+key, v)
		vt.Get(g, "fresh"+key)
	}
	encodeMatches(t, snap, want, "deleted and put again")
}

// TestRestoredGroupIsNotListedWithItsOldSlots: a group restored from
// bytes holding the same keys gets new slots. The next snapshot must read
// those, not the slots its last listing kept (which hold the values from
// before the restore), and so for a group dropped and filled again.
func TestRestoredGroupIsNotListedWithItsOldSlots(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	older := barrierBlobs(t, b) // the values to restore later
	for i, key := range keys {
		v, _ := vt.Get(i%16, key)
		v.Value[0] = 'x'
		vt.Put(i%16, key, v)
	}
	snap, want := snapshotNow(t, b) // lists every group and keeps its slots
	encodeMatches(t, snap, want, "before the restore")
	if err := b.RestoreGroup(3, []byte(older[3])); err != nil {
		t.Fatal(err)
	}
	b.DropGroup(5)
	for i, key := range keys {
		if i%16 == 5 {
			vt.Put(5, key, snapEntry{Count: 1, Value: []byte("again")})
		}
	}
	snap, want = snapshotNow(t, b)
	if want[3] != older[3] {
		t.Fatal("the restored group does not hold what was restored: the test measures nothing")
	}
	encodeMatches(t, snap, want, "after restoring group 3 and refilling group 5")
}

// TestGroupChangedByADeltaIsNotListedWithItsOldSlots: a delta restored
// onto a group gives its changed keys new slots; the next snapshot must
// read those, not the slots its last listing kept.
func TestGroupChangedByADeltaIsNotListedWithItsOldSlots(t *testing.T) {
	src, srcValues, keys := largeValuesTable(t)
	src.TrackChanges()
	dst, _, _ := largeValuesTable(t)
	groups := src.NonEmptyGroups()
	first, err := src.SnapshotAsyncAt(1, groups)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.EncodeIncremental(func(int) bool { return false }); err != nil {
		t.Fatal(err)
	}
	src.Confirm(1)
	for i, key := range keys {
		if i%16 == 3 && i%3 == 0 {
			srcValues.Put(3, key, snapEntry{Count: -7, Value: []byte("changed")})
		}
	}
	second, err := src.SnapshotAsyncAt(2, groups)
	if err != nil {
		t.Fatal(err)
	}
	blobs, deltas, err := second.EncodeIncremental(func(int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if !deltas[3] {
		t.Fatal("group 3 was written whole: the test measures nothing")
	}

	snap, want := snapshotNow(t, dst) // lists every group and keeps its slots
	encodeMatches(t, snap, want, "before the delta")
	if err := dst.RestoreGroup(3, blobs[3]); err != nil {
		t.Fatal(err)
	}
	snap, want = snapshotNow(t, dst)
	encodeMatches(t, snap, want, "after the delta")
}

// TestTableSkippedByADeltaSavesNothing: a table with no changed key in a
// group is left out of that group's delta, so the snapshot never reads it;
// once the group is encoded the task must not go on saving that table's
// values at every first touch.
func TestTableSkippedByADeltaSavesNothing(t *testing.T) {
	b := NewBackend(4)
	changed, still := NewValueTable[snapEntry]("changed", 4), NewValueTable[snapEntry]("still", 4)
	for _, vt := range []*ValueTable[snapEntry]{changed, still} {
		if _, err := b.Register(vt); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			vt.Put(0, fmt.Sprint("k", i), snapEntry{Count: int64(i), Value: []byte("v")})
		}
	}
	b.TrackChanges()
	first, err := b.SnapshotAsyncAt(1, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.EncodeIncremental(func(int) bool { return false }); err != nil {
		t.Fatal(err)
	}
	b.Confirm(1)
	changed.Put(0, "k1", snapEntry{Count: -1})
	second, err := b.SnapshotAsyncAt(2, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if _, deltas, err := second.EncodeIncremental(func(int) bool { return true }); err != nil || !deltas[0] {
		t.Fatalf("group 0 as a delta: %v, err %v", deltas[0], err)
	}
	for i := range 20 {
		key := fmt.Sprint("k", i)
		v, _ := still.Get(0, key)
		v.Count++
		still.Put(0, key, v)
		if st := still.core.groups[0][key].claim.of(still.core.cow.seq); st != 0 {
			t.Fatalf("key %s of the skipped table: claimed (state %d) for a snapshot that will not read it", key, st)
		}
	}
}
