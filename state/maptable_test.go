package state

import (
	"bytes"
	"errors"
	"maps"
	"testing"
)

func TestMapTableOps(t *testing.T) {
	tb := NewMapTable[string, int]("seen", 4)
	if _, ok := tb.Get(1, "k", "u"); ok {
		t.Fatal("Get on empty table found a value")
	}
	tb.Put(1, "k", "u1", 1)
	tb.Put(1, "k", "u2", 2)
	tb.Put(1, "j", "u1", 3)
	tb.Put(2, "k", "u1", 4)
	if v, ok := tb.Get(1, "k", "u2"); !ok || v != 2 {
		t.Fatalf("Get(1,k,u2) = %d, %v", v, ok)
	}
	if tb.Count(1, "k") != 2 || tb.Len(1) != 2 || tb.Len(2) != 1 {
		t.Fatalf("Count/Len = %d %d %d; want 2 2 1", tb.Count(1, "k"), tb.Len(1), tb.Len(2))
	}
	if got := maps.Collect(tb.Entries(1, "k")); !maps.Equal(got, map[string]int{"u1": 1, "u2": 2}) {
		t.Fatalf("Entries(1, k) = %v", got)
	}
	tb.Delete(1, "k", "u1")
	tb.Delete(1, "k", "u2")
	tb.Delete(1, "missing", "u")
	if tb.Len(1) != 1 {
		t.Fatalf("key with no user keys left still counts: Len = %d", tb.Len(1))
	}
	for k := range tb.Keys(1) {
		if k != "j" {
			t.Fatalf("Keys(1) yields %q", k)
		}
	}
	tb.Clear(1, "j")
	if tb.Len(1) != 0 || tb.Len(2) != 1 {
		t.Fatalf("after Clear: Len = %d %d", tb.Len(1), tb.Len(2))
	}
	if tb.Kind() != KindMap {
		t.Fatalf("Kind = %v", tb.Kind())
	}
}

// window is a struct user key.
type window struct {
	Start int64 `msgpack:"s"`
	End   int64 `msgpack:"e"`
}

func TestMapTableRoundTripStructKeys(t *testing.T) {
	src := NewMapTable[window, event]("windows", 8)
	for i := range int64(5) {
		src.Put(2, "user-1", window{i * 10, i*10 + 10}, event{ID: "e", Count: i})
		src.Put(2, "user-2", window{-i, 0}, event{Count: -i})
		src.Put(3, "user-1", window{i, i}, event{})
	}
	data, err := src.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewMapTable[window, event]("windows", 8)
	dst.Put(4, "x", window{}, event{ID: "untouched"})
	if err := dst.RestoreGroup(2, data); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"user-1", "user-2"} {
		want, got := maps.Collect(src.Entries(2, key)), maps.Collect(dst.Entries(2, key))
		if len(got) != len(want) {
			t.Fatalf("%s: %d user keys, want %d", key, len(got), len(want))
		}
		for uk, w := range want {
			if g, ok := got[uk]; !ok || g.ID != w.ID || g.Count != w.Count {
				t.Errorf("%s %v = %+v, want %+v", key, uk, g, w)
			}
		}
	}
	if dst.Len(3) != 0 || dst.Len(4) != 1 {
		t.Fatalf("other groups: Len(3) = %d, Len(4) = %d; want 0, 1", dst.Len(3), dst.Len(4))
	}
	again, err := dst.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatal("restored state snapshots to different bytes")
	}
}

func TestMapTableDeterministicBytes(t *testing.T) {
	a := NewMapTable[int64, string]("m", 1)
	b := NewMapTable[int64, string]("m", 1)
	for i := range int64(50) {
		a.Put(0, "k", i*7919%1000-500, "v")
		b.Put(0, "k", (49-i)*7919%1000-500, "v")
	}
	da, _ := a.SnapshotGroup(0)
	for range 10 {
		db, _ := b.SnapshotGroup(0)
		if !bytes.Equal(da, db) {
			t.Fatal("same state, different bytes")
		}
	}
}

func TestMapTableCorrupt(t *testing.T) {
	src := NewMapTable[string, int]("seen", 4)
	src.Put(1, "k", "a", 1)
	src.Put(1, "k", "b", 2)
	data, _ := src.SnapshotGroup(1)
	dup := []byte{0x81, 0xa1, 'k', 0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02}
	for i, bad := range [][]byte{data[:len(data)-1], data[:4], dup, {0x81, 0xa1, 'k', 0xdf, 0x7f, 0xff, 0xff, 0xff}} {
		dst := NewMapTable[string, int]("seen", 4)
		if err := dst.RestoreGroup(1, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("case %d: error = %v, want ErrCorrupt", i, err)
		}
	}
	// An empty inner map carries no state and is skipped.
	dst := NewMapTable[string, int]("seen", 4)
	if err := dst.RestoreGroup(1, []byte{0x81, 0xa1, 'k', 0x80}); err != nil || dst.Len(1) != 0 {
		t.Fatalf("empty inner map: err %v, Len %d", err, dst.Len(1))
	}
}
