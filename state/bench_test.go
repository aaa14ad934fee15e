package state

import (
	"strconv"
	"testing"
)

// benchKeys returns n keys spread over maxParallelism groups.
func benchKeys(n, maxParallelism int) ([]string, []int) {
	keys, groups := make([]string, n), make([]int, n)
	for i := range n {
		keys[i] = "key-" + strconv.Itoa(i)
		groups[i] = i % maxParallelism
	}
	return keys, groups
}

// BenchmarkValueTableGetPut is the keyed-count hot path: Get then Put of the
// same key, over 1000 keys.
func BenchmarkValueTableGetPut(b *testing.B) {
	const maxP = 128
	keys, groups := benchKeys(1000, maxP)
	t := NewValueTable[int64]("count", maxP)
	for i, k := range keys {
		t.Put(groups[i], k, 0)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g, k := groups[i], keys[i]
		v, _ := t.Get(g, k)
		t.Put(g, k, v+1)
		if i++; i == len(keys) {
			i = 0
		}
	}
}

// BenchmarkValueTableSnapshotGroup encodes one group of 1000 int64 values.
func BenchmarkValueTableSnapshotGroup(b *testing.B) {
	keys, _ := benchKeys(1000, 1)
	t := NewValueTable[int64]("count", 128)
	for i, k := range keys {
		t.Put(7, k, int64(i)*1000)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.SnapshotGroup(7); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValueTableRestoreGroup decodes one group of 1000 int64 values.
func BenchmarkValueTableRestoreGroup(b *testing.B) {
	keys, _ := benchKeys(1000, 1)
	t := NewValueTable[int64]("count", 128)
	for i, k := range keys {
		t.Put(7, k, int64(i)*1000)
	}
	data, _ := t.SnapshotGroup(7)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := t.RestoreGroup(7, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBackendSnapshotGroup snapshots one group of a backend with a
// value, a map and a list table of 1000 keys each.
func BenchmarkBackendSnapshotGroup(b *testing.B) {
	tt := newTestTables(b, 128)
	keys, _ := benchKeys(1000, 1)
	for i, k := range keys {
		tt.counts.Put(3, k, int64(i))
		tt.seen.Put(3, k, "a", true)
		tt.seen.Put(3, k, "b", false)
		tt.buf.Add(3, k, "x")
	}
	b.ReportAllocs()
	for b.Loop() {
		blob, err := tt.b.SnapshotGroup(3)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(blob)))
	}
}
