package state

import (
	"runtime"
	"strconv"
	"testing"
)

// TestSnapshotEncodeAllocatesItsBlobsOnce: encoding a frozen snapshot of
// large values allocates about the bytes of the blobs it returns, not a
// copy of each table's encoding on top (garbage in the order of the state
// at every checkpoint, which makes the collector scan the whole heap
// again). Not parallel: it reads the process's allocation counter.
func TestSnapshotEncodeAllocatesItsBlobsOnce(t *testing.T) {
	b := largeValuesBackend(t)
	snap, err := b.SnapshotAsync(b.NonEmptyGroups())
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	blobs, err := snap.Encode()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	out := 0
	for _, blob := range blobs {
		out += len(blob)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("encoded %d bytes of blobs, allocated %d bytes", out, allocated)
	// The blobs themselves, plus scratch of about one group (1/16 of the
	// state) and the key listings: well under one and a half times.
	if limit := uint64(out) * 3 / 2; allocated > limit {
		t.Fatalf("encoding %d bytes of blobs allocated %d bytes, want at most %d", out, allocated, limit)
	}
	for _, g := range b.NonEmptyGroups() {
		want, err := b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		if string(blobs[g]) != string(want) {
			t.Fatalf("group %d: the snapshot's blob differs from SnapshotGroup's", g)
		}
	}
}

// largeValuesBackend is a backend of 16 key groups holding 4000 keys of
// 1 KiB values, for the allocation tests.
func largeValuesBackend(t *testing.T) *Backend {
	b, _, _ := largeValuesTable(t)
	return b
}

// largeValuesTable is largeValuesBackend with its one table and its keys,
// key i in group i%16.
func largeValuesTable(t *testing.T) (*Backend, *ValueTable[snapEntry], []string) {
	t.Helper()
	const maxPar, n, valueBytes = 16, 4000, 1024
	b := NewBackend(maxPar)
	vt := NewValueTable[snapEntry]("value", maxPar)
	if _, err := b.Register(vt); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		vt.Put(i%maxPar, keys[i], snapEntry{Count: int64(i), Value: make([]byte, valueBytes)})
	}
	return b, vt, keys
}
