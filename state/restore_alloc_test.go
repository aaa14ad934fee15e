package state

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"weak"
)

// TestValueTableRestoreAllocations: restoring a key group of 4096 keys with
// a struct value holding bytes allocates per slab and arena chunk, not per
// key (it took 4 allocations a key, and one more per key for an index of
// all keys, before).
func TestValueTableRestoreAllocations(t *testing.T) {
	const keys = 4096
	src := NewValueTable[benchEntry]("value", 8)
	for i := range keys {
		src.Put(3, "k"+strconv.Itoa(i), benchEntry{Count: int64(i), Value: bytes.Repeat([]byte{byte(i)}, 64)})
	}
	data, err := src.SnapshotGroup(3)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewValueTable[benchEntry]("value", 8)
	allocs := testing.AllocsPerRun(5, func() {
		if err := dst.RestoreGroup(3, data); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > keys/16 {
		t.Fatalf("restoring %d keys took %.0f allocations, want at most %d", keys, allocs, keys/16)
	}
	for i := range keys {
		v, ok := dst.Get(3, "k"+strconv.Itoa(i))
		if !ok || v.Count != int64(i) || !bytes.Equal(v.Value, bytes.Repeat([]byte{byte(i)}, 64)) {
			t.Fatalf("key %d restored as %+v, %v", i, v, ok)
		}
	}
}

// TestRestoredBytesAreTheirOwn: restored values share arena chunks, yet
// writing into one or appending to it leaves its neighbours as they were.
func TestRestoredBytesAreTheirOwn(t *testing.T) {
	src := NewValueTable[[]byte]("raw", 4)
	for _, k := range []string{"a", "b", "c"} {
		src.Put(1, k, []byte(k+k+k))
	}
	data, err := src.SnapshotGroup(1)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewValueTable[[]byte]("raw", 4)
	if err := dst.RestoreGroup(1, data); err != nil {
		t.Fatal(err)
	}
	b, _ := dst.Get(1, "b")
	b[0] = 'X'
	b = append(b, "tail"...)
	dst.Put(1, "b", b)
	for k, want := range map[string]string{"a": "aaa", "b": "Xbbtail", "c": "ccc"} {
		if got, _ := dst.Get(1, k); string(got) != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// boxed is a value whose restore allocates an object of its own.
type boxed struct {
	P *[64]int64 `msgpack:"p"`
}

// TestValueTableDeleteReleasesSlot: a deleted key's value is not kept alive
// by the slab it was restored into while other keys still use that slab.
func TestValueTableDeleteReleasesSlot(t *testing.T) {
	src := NewValueTable[boxed]("box", 4)
	for _, k := range []string{"a", "b"} {
		src.Put(2, k, boxed{P: &[64]int64{1}})
	}
	data, err := src.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewValueTable[boxed]("box", 4)
	if err := dst.RestoreGroup(2, data); err != nil {
		t.Fatal(err)
	}
	w := weakValue(dst, "a")
	dst.Delete(2, "a")
	for range 3 {
		runtime.GC()
	}
	if w.Value() != nil {
		t.Fatal("deleted key's value still reachable")
	}
	if v, ok := dst.Get(2, "b"); !ok || v.P[0] != 1 {
		t.Fatalf("b = %+v, %v", v, ok)
	}
}

// weakValue returns a weak pointer to key's boxed array in group 2.
//
//go:noinline
func weakValue(t *ValueTable[boxed], key string) weak.Pointer[[64]int64] {
	v, _ := t.Get(2, key)
	return weak.Make(v.P)
}
