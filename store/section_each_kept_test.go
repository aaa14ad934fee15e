package store

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/weirstream/weir/internal/leaktest"
)

// TestEachSectionKeptHandsOverBytesNoOneReuses: every section handed over
// by EachSectionKept keeps its bytes after the callback returned, while
// the rest are read (a Mirror reads each local section into a buffer of its
// own); the one damaged local section still comes from the checkpoint
// store, and the counts are EachSection's. On EachSection, whose local
// sections share one buffer, the kept slices would be overwritten.
func TestEachSectionKeptHandsOverBytesNoOneReuses(t *testing.T) {
	m, primary, local, _ := newLoggedMirror(t)
	groups := []int{3, 4, 5, 6, 7, 8}
	ts := putTaskState(t, m, "j", 5, "count", 0, groups, 2048, 2)
	damaged := 2 // key group 5
	flipLocalByte(t, local, "j", 5, "count/0/state", ts.secs[damaged].Ref.Offset+10)
	kept := make([][]byte, len(ts.secs))
	stats, err := EachSectionKept(testCtx(t), m, "j", 5, ts.secs, func(i int, data []byte) error {
		if kept[i] != nil {
			t.Fatalf("section %d handed over twice", i)
		}
		kept[i] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, kept, ts.want)
	checkNoSharedBytes(t, kept)
	size := ts.secs[damaged].Ref.Size
	checkStats(t, stats, len(ts.secs)-1, 1, sumSizes(ts.secs)-size, size)
	if n := primary.read(); n != 1 {
		t.Fatalf("%d sections read from the checkpoint store, want 1", n)
	}
}

// TestEachSectionKeptRemoteSectionsShareNoBytes: read from the checkpoint
// store alone, sections are slices of their object; one asked for twice
// is handed over a second time as a copy, so no two kept sections share a
// byte and writing into one leaves the others as they were.
func TestEachSectionKeptRemoteSectionsShareNoBytes(t *testing.T) {
	m, _, _, _ := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 2, "count", 0, []int{0, 1, 2}, 512, 1)
	secs := append(append([]SectionRequest(nil), ts.secs...), ts.secs[1])
	want := append(append([][]byte(nil), ts.want...), ts.want[1])
	kept := make([][]byte, len(secs))
	stats, err := EachSectionKept(testCtx(t), remoteOnly{m}, "j", 2, secs, func(i int, data []byte) error {
		kept[i] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, stats, 0, len(secs), 0, sumSizes(secs))
	checkSections(t, kept, want)
	checkNoSharedBytes(t, kept)
	for i := range kept {
		for j := range kept[i] {
			kept[i][j] ^= 0xff
		}
		for k := range kept {
			if k != i && !bytes.Equal(kept[k], want[k]) {
				t.Fatalf("writing into section %d changed section %d", i, k)
			}
		}
		for j := range kept[i] {
			kept[i][j] ^= 0xff
		}
	}
}

// checkNoSharedBytes fails if two of the slices share memory.
func checkNoSharedBytes(t *testing.T, secs [][]byte) {
	t.Helper()
	for i := range secs {
		for k := i + 1; k < len(secs); k++ {
			if len(secs[i]) > 0 && len(secs[k]) > 0 && overlapIn(secs[i], secs[k]) {
				t.Fatalf("sections %d and %d share bytes", i, k)
			}
		}
	}
}

// overlapIn reports whether a and b share memory.
func overlapIn(a, b []byte) bool {
	a0, b0 := &a[0], &b[0]
	aEnd, bEnd := &a[len(a)-1], &b[len(b)-1]
	return !(ptr(aEnd) < ptr(b0) || ptr(bEnd) < ptr(a0))
}

// TestOverlappingMarksAllButOneOfEachOverlap: which sections
// EachSectionKept copies so that no two handed over share bytes.
func TestOverlappingMarksAllButOneOfEachOverlap(t *testing.T) {
	sec := func(name string, off, size, whole int64) SectionRequest {
		return SectionRequest{Ref: BlobRef{Name: name, Offset: off, Size: size, Whole: whole}}
	}
	for _, c := range []struct {
		name string
		secs []SectionRequest
		want []bool
	}{
		{"disjoint sections of one object", []SectionRequest{sec("a", 10, 5, 30), sec("a", 0, 10, 30), sec("a", 15, 15, 30)}, []bool{false, false, false}},
		{"same offsets in other objects", []SectionRequest{sec("a", 0, 10, 30), sec("b", 0, 10, 30)}, []bool{false, false}},
		{"one section twice", []SectionRequest{sec("a", 0, 10, 30), sec("a", 0, 10, 30)}, []bool{false, true}},
		{"partial overlap", []SectionRequest{sec("a", 5, 10, 30), sec("a", 0, 6, 30)}, []bool{true, false}},
		{"whole object and a section of it", []SectionRequest{sec("a", 0, 30, 0), sec("a", 20, 5, 30)}, []bool{false, true}},
		{"a long one covers two later ones", []SectionRequest{sec("a", 0, 20, 30), sec("a", 5, 2, 30), sec("a", 10, 2, 30), sec("a", 20, 10, 30)}, []bool{false, true, true, false}},
		{"empty", nil, []bool{}},
	} {
		got := overlapping(c.secs)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// ptr is the address of b as an integer, for comparing positions.
func ptr(b *byte) uintptr { return uintptr(unsafe.Pointer(b)) }

// TestEachSectionKeptDeliversInOrderAndStopsAtAnError: the local sections,
// read ahead on several goroutines, are handed over in order; an error of
// the callback stops the read, is returned as it is, and leaves no reader
// running.
func TestEachSectionKeptDeliversInOrderAndStopsAtAnError(t *testing.T) {
	leaktest.Check(t)
	m, _, _, _ := newLoggedMirror(t)
	groups := make([]int, 40)
	for i := range groups {
		groups[i] = i
	}
	ts := putTaskState(t, m, "j", 3, "count", 0, groups, 4096, 4)
	var order []int
	kept := make([][]byte, len(ts.secs))
	if _, err := EachSectionKept(testCtx(t), m, "j", 3, ts.secs, func(i int, data []byte) error {
		order = append(order, i)
		kept[i] = data
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k, i := range order {
		if i != k {
			t.Fatalf("sections handed over in the order %v, want 0, 1, 2, …", order)
		}
	}
	checkSections(t, kept, ts.want)
	stop := errors.New("stop here")
	n := 0
	_, err := EachSectionKept(testCtx(t), m, "j", 3, ts.secs, func(i int, data []byte) error {
		n++
		if i == 5 {
			return stop
		}
		return nil
	})
	if err != stop || n != 6 {
		t.Fatalf("callback error at section 5: %v after %d sections, want %v after 6", err, n, stop)
	}
}
