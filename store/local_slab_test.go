package store

import (
	"fmt"
	"testing"
)

// TestSectionSlabCarvesExactRooms: each section read at an offset gets room
// for exactly its bytes in one allocation (appending to one never writes
// over the next), a whole-blob read gets none, and small, damaged or absurd
// references get no shared buffer.
func TestSectionSlabCarvesExactRooms(t *testing.T) {
	const mb = 1 << 20
	refs := []BlobRef{
		{Name: "a", Offset: 0, Size: 3 * mb, Whole: 8 * mb},
		{Name: "b"}, // read whole
		{Name: "a", Offset: 3 * mb, Size: 5 * mb, Whole: 8 * mb},
	}
	bufs, slab := sectionSlab(refs, nil)
	if len(slab) != 8<<20 {
		t.Fatalf("shared buffer of %d bytes, want the 8 MiB of the sections read at an offset", len(slab))
	}
	if len(bufs) != 3 || bufs[1] != nil {
		t.Fatalf("rooms %d (whole-blob room %v), want 3 with none for the whole blob", len(bufs), bufs[1] != nil)
	}
	for _, k := range []int{0, 2} {
		if len(bufs[k]) != 0 || int64(cap(bufs[k])) != refs[k].Size {
			t.Fatalf("room %d: len %d cap %d, want 0 and %d", k, len(bufs[k]), cap(bufs[k]), refs[k].Size)
		}
	}
	next := bufs[2][:1]
	next[0] = 'y'
	_ = append(bufs[0][:cap(bufs[0])], 'x') // past its room: must copy, not write into the next
	if next[0] != 'y' {
		t.Fatal("appending past a room wrote into the next room")
	}
	for _, c := range []struct {
		name string
		refs []BlobRef
	}{
		{"below slabMin", []BlobRef{{Name: "a", Size: slabMin - 1, Whole: slabMin}}},
		{"negative size", []BlobRef{{Name: "a", Size: -1, Whole: 8 * mb}, {Name: "a", Size: 8 * mb, Whole: 8 * mb}}},
		{"past the blob", []BlobRef{{Name: "a", Offset: 4 * mb, Size: 8 * mb, Whole: 8 * mb}}},
		{"absurd", []BlobRef{{Name: "a", Size: slabMax, Whole: slabMax}, {Name: "b", Size: slabMax, Whole: slabMax}}},
	} {
		if bufs, slab := sectionSlab(c.refs, nil); bufs != nil || slab != nil {
			t.Errorf("%s: got a shared buffer, want none", c.name)
		}
	}
}

// TestMirrorReadsLargeSectionsIntoOneBuffer: a restore's local sections
// large enough to share a buffer are read whole and verified, a damaged
// one among them comes from the checkpoint store and the others stay
// local, and each section's bytes are its own (no neighbour's).
func TestMirrorReadsLargeSectionsIntoOneBuffer(t *testing.T) {
	m, primary, local, _ := newLoggedMirror(t)
	groups := []int{0, 1, 2, 3, 4, 5, 6, 7}
	ts := putTaskState(t, m, "j", 3, "count", 0, groups, 1<<20, 2) // 8 MiB of key groups
	if sumSizes(ts.secs) < slabMin {
		t.Fatalf("%d bytes of sections, below slabMin %d: the test would not read into one buffer", sumSizes(ts.secs), slabMin)
	}
	damaged := 5
	flipLocalByte(t, local, "j", 3, "count/0/state", ts.secs[damaged].Ref.Offset+4096)
	got := readOneRemotely(t, m, primary, 3, ts, damaged)
	for i, g := range got {
		if i == damaged {
			continue // read remotely
		}
		if int64(cap(g)) != ts.secs[i].Ref.Size {
			t.Fatalf("section %d: capacity %d, want its size %d", i, cap(g), ts.secs[i].Ref.Size)
		}
		_ = append(g, fmt.Sprint(i)...) // must not reach the next section
	}
	checkSections(t, got, ts.want)
}
