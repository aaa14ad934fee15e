package plan

import "testing"

// TestBatchSliceSharesStorage checks that a slice of a batch holds the right
// records (and key groups), shares the batch's storage, and cannot append
// into the rest of it.
func TestBatchSliceSharesStorage(t *testing.T) {
	recs := Records[int]{0, 1, 2, 3, 4, 5}
	s := recs.Slice(2, 5).(Records[int])
	if len(s) != 3 || s[0] != 2 || s[2] != 4 || &s[0] != &recs[2] {
		t.Fatalf("Records.Slice(2, 5) = %v, want [2 3 4] sharing storage", s)
	}
	if cap(s) != 3 {
		t.Fatalf("slice capacity %d, want 3: appending would overwrite the batch", cap(s))
	}
	g := Grouped[int]{Recs: []int{10, 11, 12, 13}, Groups: []uint16{7, 8, 9, 6}}
	gs := g.Slice(1, 3).(Grouped[int])
	if gs.Len() != 2 || gs.Recs[0] != 11 || gs.Groups[0] != 8 || gs.Groups[1] != 9 || &gs.Recs[0] != &g.Recs[1] {
		t.Fatalf("Grouped.Slice(1, 3) = %+v, want records [11 12] groups [8 9] sharing storage", gs)
	}
	bare := Grouped[int]{Recs: []int{1, 2, 3}}
	if bs := bare.Slice(0, 2).(Grouped[int]); bs.Len() != 2 || bs.Groups != nil {
		t.Fatalf("slice of a batch without groups = %+v, want 2 records, no groups", bs)
	}
	if s := recs.Slice(6, 6); s.Len() != 0 {
		t.Fatalf("empty slice has %d records", s.Len())
	}
}

// TestBatchSliceAllocation checks slicing costs one small allocation (the
// interface value) whatever the batch's length: nothing per record.
func TestBatchSliceAllocation(t *testing.T) {
	for _, n := range []int{2, 1 << 16} {
		recs := make(Records[int64], n)
		g := Grouped[int64]{Recs: make([]int64, n), Groups: make([]uint16, n)}
		var sink Batch
		if a := testing.AllocsPerRun(100, func() { sink = recs.Slice(1, n) }); a > 1 {
			t.Errorf("Records.Slice of %d records: %.0f allocations, want at most 1", n, a)
		}
		if a := testing.AllocsPerRun(100, func() { sink = g.Slice(1, n) }); a > 1 {
			t.Errorf("Grouped.Slice of %d records: %.0f allocations, want at most 1", n, a)
		}
		_ = sink
	}
}
