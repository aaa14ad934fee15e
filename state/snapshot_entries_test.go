package state

import (
	"fmt"
	"testing"
)

// TestSnapshotEntriesCountsWrittenAndLive: an incremental snapshot reports,
// per encoded key group, the entries its blob holds and the keys the group
// held at the barrier. A whole blob holds every key of every table (timers,
// written whole, too); a delta holds the changed keys and the deleted ones'
// tombstones plus the tables it writes whole, while the live count drops by
// the deleted keys. Keys changed after the barrier count in neither.
func TestSnapshotEntriesCountsWrittenAndLive(t *testing.T) {
	f := newAsyncFixture(t, 2)
	f.b.TrackChanges()
	f.timers.Own([]int{0, 1})
	for i := range 100 {
		f.values.Put(0, fmt.Sprintf("k%03d", i), []byte{byte(i)})
	}
	for i := range 10 {
		f.maps.Put(0, fmt.Sprintf("m%d", i), "a", i)
		f.maps.Put(0, fmt.Sprintf("m%d", i), "b", i)
	}
	f.lists.Add(0, "l", 1)
	f.timers.Register(Timer{At: 5, Group: 0, Key: "k001"})
	f.timers.Register(Timer{At: 6, Group: 0, Key: "k002"})
	f.values.Put(1, "other", []byte{1})

	encode := func(id uint64, after func()) map[int][2]int {
		t.Helper()
		s, err := f.b.SnapshotAsyncAt(id, []int{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := s.Entries(0); ok {
			t.Fatal("Entries answered for a group not encoded yet")
		}
		if after != nil {
			after()
		}
		if _, _, err := s.EncodeIncremental(func(int) bool { return true }); err != nil {
			t.Fatal(err)
		}
		out := map[int][2]int{}
		for _, g := range []int{0, 1} {
			written, live, ok := s.Entries(g)
			if !ok {
				t.Fatalf("checkpoint %d key group %d: no entry counts", id, g)
			}
			out[g] = [2]int{written, live}
		}
		f.b.Confirm(id)
		return out
	}
	// Whole: 100 values + 10 map keys + 1 list key + 2 timers.
	if got, want := encode(1, nil), map[int][2]int{0: {113, 113}, 1: {1, 1}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("whole snapshot entries %v, want %v", got, want)
	}
	f.values.Put(0, "k000", []byte("new"))
	f.values.Put(0, "k000", []byte("newer")) // one key, changed twice
	f.values.Put(0, "z-added", []byte("added"))
	f.values.Delete(0, "k050")
	f.maps.Put(0, "m3", "c", 3)
	// Delta of group 0: 2 values + 1 tombstone + 1 map key + 2 timers
	// (whole); live: 113 + 1 added - 1 deleted. Group 1 is unchanged: an
	// empty delta. Changes after the barrier count in neither.
	got := encode(2, func() {
		for i := range 30 {
			f.values.Put(0, fmt.Sprintf("late%d", i), []byte{1})
		}
	})
	if want := (map[int][2]int{0: {6, 113}, 1: {0, 1}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delta entries %v, want %v", got, want)
	}
}

// TestSnapshotEntriesNotTracked: a snapshot of a backend that does not track
// changes counts nothing.
func TestSnapshotEntriesNotTracked(t *testing.T) {
	f := newAsyncFixture(t, 1)
	f.values.Put(0, "a", []byte{1})
	s, err := f.b.SnapshotAsyncAt(1, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Encode(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.Entries(0); ok {
		t.Fatal("entry counts of a snapshot that does not track changes")
	}
}
