package state

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestStageGroupsOffTheOwnersGoroutine decodes two key groups' blobs on
// another goroutine while the owner changes the backend's other groups (the
// race detector watches), then commits: the groups are as RestoreGroup
// makes them, tables missing from a blob are emptied, and the other groups
// keep the owner's changes.
func TestStageGroupsOffTheOwnersGoroutine(t *testing.T) {
	const maxP = 8
	mk := func() (*Backend, *ValueTable[int], *MapTable[string, int], *ListTable[int]) {
		b := NewBackend(maxP)
		v, m, l := NewValueTable[int]("v", maxP), NewMapTable[string, int]("m", maxP), NewListTable[int]("l", maxP)
		for _, tb := range []Table{v, m, l} {
			if _, err := b.Register(tb); err != nil {
				t.Fatal(err)
			}
		}
		return b, v, m, l
	}
	src, sv, sm, sl := mk()
	for g := range maxP {
		for i := range 50 {
			k := fmt.Sprintf("k%d", i)
			sv.Put(g, k, g*100+i)
			if g != 3 { // group 3's blob has no map table
				sm.Put(g, k, "a", i)
			}
			sl.Add(g, k, i)
		}
	}
	blobs := map[int][]byte{}
	for _, g := range []int{2, 3} {
		blob, err := src.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		blobs[g] = blob
	}
	dst, dv, dm, _ := mk()
	dm.Put(3, "stale", "x", 1) // dropped at commit: group 3's blob has no map table
	staged := make(chan *StagedGroups, 1)
	errs := make(chan error, 1)
	go func() {
		s, err := dst.StageGroups(blobs)
		errs <- err
		staged <- s
	}()
	for i := range 2000 { // the owner, on groups that do not move
		dv.Put(i%2, fmt.Sprintf("o%d", i%100), i)
		dm.Put(5, "o", "n", i)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	s := <-staged
	if v, ok := dv.Get(2, "k7"); ok {
		t.Fatalf("staged state visible before the commit: %d", v)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, g := range []int{2, 3} {
		got, err := dst.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, blobs[g]) {
			t.Fatalf("group %d after the commit differs from the blob staged", g)
		}
	}
	if v, _ := dv.Get(1, "o99"); v != 1999 {
		t.Fatalf("the owner's change to group 1: %d, want 1999", v)
	}
}

// TestStageGroupsRefusesBadBlobs: a corrupt blob or one of another key
// group is an error from StageGroups, and nothing changes.
func TestStageGroupsRefusesBadBlobs(t *testing.T) {
	const maxP = 4
	b := NewBackend(maxP)
	v := NewValueTable[int]("v", maxP)
	if _, err := b.Register(v); err != nil {
		t.Fatal(err)
	}
	v.Put(1, "k", 1)
	blob, err := b.SnapshotGroup(1)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(blob)
	bad[len(bad)-1] ^= 0xff
	for name, blobs := range map[string]map[int][]byte{
		"corrupt":      {1: bad},
		"other group":  {2: blob},
		"out of range": {9: blob},
	} {
		if _, err := b.StageGroups(blobs); err == nil {
			t.Fatalf("%s: staged", name)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrMismatch) && !errors.Is(err, ErrGroupRange) {
			t.Fatalf("%s: %v, want corrupt, mismatch or range", name, err)
		}
	}
	if got, _ := v.Get(1, "k"); got != 1 || b.GroupLen(2) != 0 {
		t.Fatal("a refused stage changed the backend")
	}
}
