package state

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestAsyncSnapshotReusesListingOnlyWhileExact: a snapshot lists a group with
// the sorted keys of the snapshot before when the group holds the same keys
// at its barrier, and only then. Each round changes every group between
// barriers (values only, a key swapped for another, one deleted, one added,
// one deleted and added again, the group restored from its own bytes) and
// again before the snapshot is encoded (values only, a key deleted, one
// added, a key of the last listing gone at the barrier added and deleted).
// The bytes must be those of a synchronous snapshot at the barrier. The
// listing must be taken with its slots as they are exactly where no key was
// added or removed from one barrier to the next, and reused at all exactly
// where, besides, the keys at the barrier were those of the last listing
// and none was added since the barrier.
func TestAsyncSnapshotReusesListingOnlyWhileExact(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 11))
	const groups = 4
	f := newAsyncFixture(t, groups)
	keys := make([][]string, groups) // by group: its keys now
	edited := make([]bool, groups)   // by group: a key added or removed since the last barrier
	next := 0
	add := func(g int) {
		key := fmt.Sprintf("k%05d", next)
		next++
		f.values.Put(g, key, []byte{byte(next), 1, 2, 3})
		keys[g] = append(keys[g], key)
		edited[g] = true
	}
	del := func(g int) string {
		i := r.IntN(len(keys[g]))
		key := keys[g][i]
		f.values.Delete(g, key)
		edited[g] = true
		keys[g] = append(keys[g][:i], keys[g][i+1:]...)
		return key
	}
	change := func(g int) {
		for range 5 {
			v, _ := f.values.Get(g, keys[g][r.IntN(len(keys[g]))])
			v[r.IntN(len(v))]++ // in place, as bigstate does
		}
	}
	for g := range groups {
		for range 40 {
			add(g)
		}
	}
	listedBefore := make([]bool, groups)
	lastListed := make([][]string, groups) // by group: its keys at the last barrier, sorted
	reusedSome, rebuiltSome, asTheyAreSome := false, false, false
	for round := range 60 {
		for g := range groups {
			change(g)
			switch r.IntN(6) {
			case 1: // swap: as many keys, another set
				del(g)
				add(g)
			case 2:
				del(g)
			case 3:
				add(g)
			case 4: // delete and add the same key again
				key := del(g)
				f.values.Put(g, key, []byte{9})
				keys[g] = append(keys[g], key)
			case 5: // restored from its own bytes: a new map, the same keys
				blob, err := f.b.SnapshotGroup(g)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.b.RestoreGroup(g, blob); err != nil {
					t.Fatal(err)
				}
				edited[g] = true
			}
		}
		same := make([]bool, groups) // the keys at this barrier are those of the last listing
		prevListed := slices.Clone(lastListed)
		for g := range groups {
			now := slices.Sorted(slices.Values(keys[g]))
			same[g] = slices.Equal(now, lastListed[g])
			lastListed[g] = now
		}
		all, want := f.syncSnapshot(t)
		snap, err := f.b.SnapshotAsync(all)
		if err != nil {
			t.Fatal(err)
		}
		editedBefore := slices.Clone(edited)
		clear(edited)
		addedSince := make([]bool, groups)
		for g := range groups {
			change(g)
			switch r.IntN(4) {
			case 1:
				del(g)
			case 2:
				add(g)
				addedSince[g] = true
			case 3: // a key of the last listing gone at the barrier: added and deleted again
				for _, key := range prevListed[g] {
					if !slices.Contains(keys[g], key) {
						f.values.Put(g, key, []byte{7})
						f.values.Delete(g, key)
						addedSince[g], edited[g] = true, true
						break
					}
				}
			}
		}
		got, err := snap.Encode()
		if err != nil {
			t.Fatal(err)
		}
		c := f.values.core.cow
		for g := range groups {
			if !bytes.Equal(got[g], want[g]) {
				t.Fatalf("round %d key group %d: asynchronous snapshot differs from the state at the barrier (seed %d)", round, g, seed)
			}
			cg := &c.gs[g]
			reused := len(cg.prev.keys) > 0 && unsafe.SliceData(cg.prog.list.keys) == unsafe.SliceData(cg.prev.keys)
			asTheyAre := len(cg.prev.vals) > 0 && unsafe.SliceData(cg.vals) == unsafe.SliceData(cg.prev.vals)
			if want := listedBefore[g] && !editedBefore[g]; asTheyAre != want {
				t.Fatalf("round %d key group %d: listing taken with its slots as they are %v, want %v (seed %d)", round, g, asTheyAre, want, seed)
			}
			if wantReuse := listedBefore[g] && same[g] && (!addedSince[g] || !editedBefore[g]); reused != wantReuse {
				t.Fatalf("round %d key group %d: listing reused %v, want %v (seed %d)", round, g, reused, wantReuse, seed)
			}
			asTheyAreSome = asTheyAreSome || asTheyAre
			reusedSome = reusedSome || reused
			rebuiltSome = rebuiltSome || (!reused && listedBefore[g])
			listedBefore[g] = true
		}
	}
	if !reusedSome || !rebuiltSome || !asTheyAreSome {
		t.Fatalf("reused some listing %v (with its slots as they are %v), rebuilt some %v: the rounds did not reach every side (seed %d)", reusedSome, asTheyAreSome, rebuiltSome, seed)
	}
}

// TestDroppedGroupLetsItsListingGo: the listing kept for reuse goes with a
// dropped group (one a rescale moved away is never listed again, and its
// keys must not stay reachable).
func TestDroppedGroupLetsItsListingGo(t *testing.T) {
	f := newAsyncFixture(t, 4)
	for i := range 10 {
		f.values.Put(1, fmt.Sprintf("k%d", i), []byte{1})
	}
	for range 2 { // the second freeze keeps the first one's listing
		snap, err := f.b.SnapshotAsync([]int{1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snap.Encode(); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.values.core.listed) <= 1 || len(f.values.core.listed[1].keys) != 10 {
		t.Fatalf("listing kept before the drop: %v, want the group's 10 keys", f.values.core.listed)
	}
	f.b.DropGroup(1)
	if f.values.core.listed[1].keys != nil || f.values.core.listed[1].vals != nil {
		t.Fatalf("listing after the group was dropped: %v, want none", f.values.core.listed[1])
	}
}
