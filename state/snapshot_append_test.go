package state

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
	"testing"
)

// TestEncodeAppendLaysOutTheBarriersBlobs: EncodeAppend writes after what
// dst holds, in the order of Groups, each group's blob exactly as a
// synchronous snapshot at the barrier gives it, changes made meanwhile
// left out; a group the task encoded itself first (the next snapshot came
// before this one was encoded) is copied in, and stays the snapshot's;
// encoding a group written straight into dst again fails with
// ErrSnapshotAppended.
func TestEncodeAppendLaysOutTheBarriersBlobs(t *testing.T) {
	f := newAsyncFixture(t, 8)
	for i := range 400 {
		f.values.Put(i%8, "k"+strconv.Itoa(i), []byte{byte(i), 1, 2})
	}
	groups, want := f.syncSnapshot(t)
	s1, err := f.b.SnapshotAsync(groups)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 { // after the barrier: must not leak
		v, _ := f.values.Get(i%8, "k"+strconv.Itoa(i))
		v[0]++
	}
	f.values.Put(3, "new", []byte{9})
	_, want2 := f.syncSnapshot(t)
	s2, err := f.b.SnapshotAsync(groups) // the task encodes s1's groups itself first
	if err != nil {
		t.Fatal(err)
	}
	f.values.Put(3, "newer", []byte{9})
	for i, c := range []struct {
		s       *AsyncSnapshot
		want    map[int][]byte
		written bool // straight into dst, not copied
	}{{s1, want, false}, {s2, want2, true}} {
		prefix := []byte("prefix")
		out, sections, deltas, err := c.s.EncodeAppend(bytes.Clone(prefix), nil)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i+1, err)
		}
		if !bytes.HasPrefix(out, prefix) || len(deltas) != 0 || len(sections) != len(groups) {
			t.Fatalf("snapshot %d: prefix kept %v, %d deltas, %d sections for %d groups", i+1, bytes.HasPrefix(out, prefix), len(deltas), len(sections), len(groups))
		}
		at := int64(len(prefix))
		for _, g := range groups {
			sec := sections[g]
			if sec[0] != at {
				t.Fatalf("snapshot %d group %d at %d, want %d: not laid out in the order of Groups", i+1, g, sec[0], at)
			}
			at += sec[1]
			if !bytes.Equal(out[sec[0]:sec[0]+sec[1]], c.want[g]) {
				t.Fatalf("snapshot %d group %d: appended blob is not the state at the barrier", i+1, g)
			}
		}
		if at != int64(len(out)) {
			t.Fatalf("snapshot %d: %d bytes appended past the last group", i+1, int64(len(out))-at)
		}
		again, err := c.s.Encode()
		switch {
		case c.written && !errors.Is(err, ErrSnapshotAppended):
			t.Fatalf("snapshot %d encoded again: %v, want ErrSnapshotAppended", i+1, err)
		case !c.written && err != nil:
			t.Fatalf("snapshot %d, encoded by the task, encoded again: %v", i+1, err)
		case !c.written:
			for _, g := range groups {
				if !bytes.Equal(again[g], c.want[g]) {
					t.Fatalf("snapshot %d group %d encoded again differs", i+1, g)
				}
			}
		}
	}
}

// TestEncodeAppendAllocatesNothingOfTheStatesSize: appended into a buffer
// with room for the blobs, the encoding allocates scratch of about one
// group, not a blob per group.
func TestEncodeAppendAllocatesNothingOfTheStatesSize(t *testing.T) {
	b := largeValuesBackend(t)
	snap, err := b.SnapshotAsync(b.NonEmptyGroups())
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 5<<20) // room for the 4000 values of 1 KiB and their framing
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, _, _, err := snap.EncodeAppend(dst, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if &out[:1][0] != &dst[:1][0] {
		t.Fatal("the blobs did not fit the buffer given")
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("appended %d bytes of blobs, allocated %d bytes", len(out), allocated)
	// Scratch of about one group (1/16 of the state, grown by doubling)
	// and the key listings, well under a blob per group (the state again).
	if limit := uint64(len(out)) / 2; allocated > limit {
		t.Fatalf("appending %d bytes of blobs allocated %d bytes, want at most %d", len(out), allocated, limit)
	}
}
