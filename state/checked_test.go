package state

import (
	"errors"
	"hash/crc32"
	"testing"
)

// TestRestoreGroupCheckedIsAsStrict: given the CRC-32C of the bytes as read,
// RestoreGroupChecked rejects every blob with one byte changed exactly as
// RestoreGroup does, accepts the intact blob, and rejects it when told a
// CRC that is not the blob's.
func TestRestoreGroupCheckedIsAsStrict(t *testing.T) {
	src := newTestTables(t, 4)
	src.fill(2, "x")
	blob, err := src.b.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	sum := crc32.Checksum(blob, castagnoli)
	dst := newTestTables(t, 4)
	if err := dst.b.RestoreGroupChecked(2, blob, sum); err != nil {
		t.Fatalf("intact blob: %v", err)
	}
	if dst.dump(2) != src.dump(2) {
		t.Fatal("restored state differs")
	}
	if err := dst.b.RestoreGroupChecked(2, blob, sum^1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("intact blob with a wrong crc: %v, want ErrCorrupt", err)
	}
	for i := range blob {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte(nil), blob...)
			bad[i] ^= flip
			plainErr := newTestTables(t, 4).b.RestoreGroup(2, bad)
			checkedErr := newTestTables(t, 4).b.RestoreGroupChecked(2, bad, crc32.Checksum(bad, castagnoli))
			if plainErr == nil || checkedErr == nil {
				t.Fatalf("byte %d ^ %#x: RestoreGroup %v, RestoreGroupChecked %v: want both to fail", i, flip, plainErr, checkedErr)
			}
			if errors.Is(plainErr, ErrCorrupt) != errors.Is(checkedErr, ErrCorrupt) || errors.Is(plainErr, ErrVersion) != errors.Is(checkedErr, ErrVersion) {
				t.Fatalf("byte %d ^ %#x: RestoreGroup %v, RestoreGroupChecked %v: different classes", i, flip, plainErr, checkedErr)
			}
		}
	}
}
