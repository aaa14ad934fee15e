package state

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestPartsEncodedInPlaceAreTheBlobs: appending a snapshot to a buffer
// (EncodeAppend, EncodeStream), each table's part is encoded straight
// into the buffer (encodeTablesInPlace), and every group's blob is still
// the one SnapshotGroup gives, byte for byte: parts of every bin header
// size (a part under 256 bytes, under 64 KiB, and larger, which fits the
// room left exactly), groups of four tables, buffers with no room (the
// parts copied in), little room and plenty. With plenty, no part went
// through a table's scratch.
func TestPartsEncodedInPlaceAreTheBlobs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, room := range []int{0, 64, 64 << 20} {
		t.Run("room "+strconv.Itoa(room), func(t *testing.T) {
			f := newAsyncFixture(t, 16)
			fillLargeGroups(f, 4) // groups 0…3: parts of 320 KiB to 1.25 MiB
			f.values.Put(4, "small", []byte{1, 2, 3})
			for i := range 30 {
				f.values.Put(5, "mid"+strconv.Itoa(i), bytes.Repeat([]byte{byte(i)}, 100))
			}
			r := rand.New(rand.NewPCG(seed, 3))
			for range 2000 {
				f.step(r, 200) // maps, lists and timers in every group
			}
			groups, want := f.syncSnapshot(t)
			s, err := f.b.SnapshotAsync(groups)
			if err != nil {
				t.Fatal(err)
			}
			var dst []byte
			if room > 0 {
				dst = make([]byte, 0, room)
			}
			out, sections, _, err := s.EncodeAppend(dst, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range groups {
				sec := sections[g]
				if got := out[sec[0] : sec[0]+sec[1]]; !bytes.Equal(got, want[g]) {
					t.Fatalf("group %d: blob of %d bytes differs from SnapshotGroup's %d", g, len(got), len(want[g]))
				}
			}
			if room < 64<<20 {
				return
			}
			for i, eb := range s.scratch.kept.tables {
				if cap(eb.raw) > 0 {
					t.Fatalf("table %d's scratch grew to %d bytes: its parts were encoded there and copied, not in place", i, cap(eb.raw))
				}
			}
		})
	}
}
