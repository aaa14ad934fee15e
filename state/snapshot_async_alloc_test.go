package state

import (
	"io"
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

// TestSnapshotsReuseTheEncodersScratch: the encoder's scratch, grown to the
// largest group by one snapshot, is kept for the next (scratchKeep), so
// streaming the next snapshot of the same keys allocates far less than
// one group (its key listings, not its values): with large state the scratch, made afresh for every
// checkpoint, was most of what a checkpoint allocated. Not parallel: it
// reads the process's allocation counter.
func TestSnapshotsReuseTheEncodersScratch(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	groups := b.NonEmptyGroups()
	var buf []byte
	stream := func() uint64 {
		snap, err := b.SnapshotAsync(groups)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var st Streamed
		st, buf, err = snap.EncodeStream(io.Discard, buf, nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if st.Bytes < int64(len(keys))*1024 {
			t.Fatalf("streamed %d bytes of %d keys of 1 KiB", st.Bytes, len(keys))
		}
		snap.Release(b)
		return after.TotalAlloc - before.TotalAlloc
	}
	first := stream()
	for i, key := range keys { // the same keys, other values: the listings stay
		vt.Put(i%16, key, snapEntry{Count: int64(i + 1), Value: make([]byte, 1024)})
	}
	second := stream()
	group := uint64(len(keys) / 16 * 1024)
	t.Logf("first snapshot allocated %d bytes, the second %d; a group holds %d bytes of values", first, second, group)
	if second > group/2 {
		t.Fatalf("the second snapshot allocated %d bytes streaming, want at most half a group (%d): the encoder's scratch was made afresh", second, group/2)
	}
}
