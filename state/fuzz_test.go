package state

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzBackendRestore feeds arbitrary blobs to Backend.RestoreGroup: it must
// never panic, must fail with one of the documented sentinels, and whatever
// it accepts must snapshot back to a blob that restores to the same state.
func FuzzBackendRestore(f *testing.F) {
	src := newTestTables(f, 4)
	src.fill(1, "seed")
	blob, err := src.b.SnapshotGroup(1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(blob)
	f.Add(blob[:len(blob)/2])
	f.Add([]byte{formatVersion})
	f.Add(withCRC([]byte{formatVersion, 0x93, 0x01, 0x04, 0x80}))
	f.Fuzz(func(t *testing.T, data []byte) {
		tt := newTestTables(t, 4)
		err := tt.b.RestoreGroup(1, data)
		if err != nil {
			for _, s := range []error{ErrCorrupt, ErrVersion, ErrMismatch, ErrUnknownTable} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error without a sentinel: %v", err)
		}
		checkStable(t, tt, 1)
	})
}

// FuzzTableRestore does the same for the per-table group encodings, with the
// envelope's checksum out of the way.
func FuzzTableRestore(f *testing.F) {
	src := newTestTables(f, 4)
	src.fill(1, "seed")
	for _, tb := range []Table{src.counts, src.seen, src.buf} {
		data, err := tb.SnapshotGroup(1)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tt := newTestTables(t, 4)
		for _, tb := range []Table{tt.counts, tt.seen, tt.buf} {
			if err := tb.RestoreGroup(1, data); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: error without ErrCorrupt: %v", tb.Name(), err)
			}
		}
		checkStable(t, tt, 1)
	})
}

// checkStable snapshots group g, restores it elsewhere and demands the same
// state and bytes.
func checkStable(t *testing.T, tt testTables, g int) {
	t.Helper()
	again, err := tt.b.SnapshotGroup(g)
	if err != nil {
		t.Fatalf("snapshot of accepted state: %v", err)
	}
	other := newTestTables(t, tt.b.MaxParallelism())
	if err := other.b.RestoreGroup(g, again); err != nil {
		t.Fatalf("restore of own snapshot: %v", err)
	}
	if other.dump(g) != tt.dump(g) {
		t.Fatal("state changed across snapshot/restore")
	}
	third, _ := other.b.SnapshotGroup(g)
	if !bytes.Equal(again, third) {
		t.Fatal("snapshot bytes not stable")
	}
}
