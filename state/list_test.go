package state

import (
	"errors"
	"slices"
	"testing"
)

func TestListTableOps(t *testing.T) {
	tb := NewListTable[string]("buf", 4)
	if tb.Get(0, "k") != nil {
		t.Fatal("Get on empty table returned a list")
	}
	tb.Add(0, "k", "a")
	tb.Add(0, "k", "b")
	tb.Add(1, "k", "z")
	if got := tb.Get(0, "k"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Get(0, k) = %v", got)
	}
	tb.Update(0, "k", []string{"c"})
	if got := tb.Get(0, "k"); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after Update: %v", got)
	}
	tb.Update(0, "k", nil)
	if tb.Len(0) != 0 || tb.Get(0, "k") != nil {
		t.Fatal("Update with an empty list did not clear the key")
	}
	tb.Update(2, "new", []string{"x", "y"})
	tb.Clear(1, "k")
	if tb.Len(1) != 0 || tb.Len(2) != 1 {
		t.Fatalf("Len = %d %d; want 0 1", tb.Len(1), tb.Len(2))
	}
	if tb.Kind() != KindList {
		t.Fatalf("Kind = %v", tb.Kind())
	}
}

func TestListTableRoundTrip(t *testing.T) {
	src := NewListTable[event]("pending", 8)
	for i := range int64(4) {
		src.Add(6, "a", event{ID: "a", Count: i})
		src.Add(6, "b", event{ID: "b", Count: 10 - i})
		src.Add(7, "a", event{})
	}
	data, err := src.SnapshotGroup(6)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewListTable[event]("pending", 8)
	dst.Add(6, "stale", event{})
	if err := dst.RestoreGroup(6, data); err != nil {
		t.Fatal(err)
	}
	if dst.Len(6) != 2 || dst.Len(7) != 0 {
		t.Fatalf("Len(6) = %d, Len(7) = %d; want 2, 0", dst.Len(6), dst.Len(7))
	}
	for _, key := range []string{"a", "b"} {
		want, got := src.Get(6, key), dst.Get(6, key)
		if len(got) != len(want) {
			t.Fatalf("%s: %d elements, want %d", key, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Count != want[i].Count {
				t.Fatalf("%s[%d] = %+v, want %+v (order must be kept)", key, i, got[i], want[i])
			}
		}
	}
}

func TestListTableCorrupt(t *testing.T) {
	src := NewListTable[int64]("l", 2)
	src.Update(0, "k", []int64{1, 2, 300000})
	data, _ := src.SnapshotGroup(0)
	for i := 1; i < len(data); i++ {
		dst := NewListTable[int64]("l", 2)
		if err := dst.RestoreGroup(0, data[:i]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d: error = %v, want ErrCorrupt", i, err)
		}
	}
	// Array header claiming 2^32-1 elements must fail without allocating them.
	dst := NewListTable[int64]("l", 2)
	if err := dst.RestoreGroup(0, []byte{0x81, 0xa1, 'k', 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("huge array: error = %v, want ErrCorrupt", err)
	}
}
