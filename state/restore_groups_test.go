package state

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// entry is a plain struct value holding bytes, like a sample's keyed state.
type entry struct {
	Count int64  `msgpack:"c"`
	Value []byte `msgpack:"v"`
}

// allKinds is a backend with a table of every kind: values (scalars,
// bytes, plain structs), maps, lists and timers.
type allKinds struct {
	testTables
	bytes   *ValueTable[[]byte]
	entries *ValueTable[entry]
	timers  *TimerTable
}

func newAllKinds(t *testing.T, maxParallelism int) allKinds {
	t.Helper()
	a := allKinds{testTables: newTestTables(t, maxParallelism),
		bytes:   NewValueTable[[]byte]("bytes", maxParallelism),
		entries: NewValueTable[entry]("entries", maxParallelism),
		timers:  NewTimerTable("timers", maxParallelism)}
	for _, tb := range []Table{a.bytes, a.entries, a.timers} {
		if _, err := a.b.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	groups := make([]int, maxParallelism)
	for g := range groups {
		groups[g] = g
	}
	a.timers.Own(groups)
	return a
}

// newFilledAllKinds is newAllKinds with state in every group.
func newFilledAllKinds(t *testing.T, groups int, tag string) allKinds {
	a := newAllKinds(t, groups)
	for g := range groups {
		a.fillAll(g, tag)
	}
	return a
}

// fillAll puts state into group g of every table.
func (a allKinds) fillAll(g int, tag string) {
	a.fill(g, tag)
	for k := range 20 {
		key := fmt.Sprintf("%s-%d-%d", tag, g, k)
		a.bytes.Put(g, key, bytes.Repeat([]byte{byte(g), byte(k)}, 8+k))
		a.entries.Put(g, key, entry{Count: int64(k), Value: bytes.Repeat([]byte{byte(k), byte(g)}, 16)})
	}
	a.timers.Register(Timer{At: int64(100 + g), Group: g, Key: tag + "-timer"})
}

// snapshots returns every group's blob.
func (a allKinds) snapshots(t *testing.T, groups int) [][]byte {
	t.Helper()
	blobs := make([][]byte, groups)
	for g := range blobs {
		var err error
		if blobs[g], err = a.b.SnapshotGroup(g); err != nil {
			t.Fatal(err)
		}
	}
	return blobs
}

// groupBlobs lists blobs as RestoreGroups takes them, in a shuffled order,
// with their CRCs known or not.
func groupBlobs(blobs [][]byte, checked bool, rng *rand.Rand) []GroupBlob {
	gbs := make([]GroupBlob, len(blobs))
	for g, b := range blobs {
		gbs[g] = GroupBlob{Group: g, Blob: bytes.Clone(b), CRC: crc32.Checksum(b, castagnoli), CRCKnown: checked}
	}
	rng.Shuffle(len(gbs), func(i, j int) { gbs[i], gbs[j] = gbs[j], gbs[i] })
	return gbs
}

// TestRestoreGroupsRestoresEveryTableKind: several key groups restored at
// once (decoded in parallel), adopting their blobs or copying, with CRCs
// known or not, snapshot again to the very bytes they were restored from,
// in every kind of table.
func TestRestoreGroupsRestoresEveryTableKind(t *testing.T) {
	const groups = 16
	src := newAllKinds(t, groups)
	for g := range groups {
		if g%5 != 3 { // some groups stay empty
			src.fillAll(g, "k")
		}
	}
	want := src.snapshots(t, groups)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, adopt := range []bool{false, true} {
		for _, checked := range []bool{false, true} {
			dst := newAllKinds(t, groups)
			if err := dst.b.RestoreGroups(groupBlobs(want, checked, rng), adopt); err != nil {
				t.Fatalf("adopt=%v checked=%v: %v", adopt, checked, err)
			}
			got := dst.snapshots(t, groups)
			for g := range groups {
				if !bytes.Equal(got[g], want[g]) {
					t.Fatalf("adopt=%v checked=%v: key group %d snapshots to other bytes than it was restored from:\n%s\nwant\n%s",
						adopt, checked, g, dst.dump(g), src.dump(g))
				}
			}
		}
	}
}

// inside reports whether b lies within buf's memory.
func inside(b, buf []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	start, end := uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&buf[len(buf)-1]))
	p := uintptr(unsafe.Pointer(&b[0]))
	return p >= start && p <= end
}

// TestRestoreGroupsAdoptedValuesPointIntoBlobsAndStayApart: with adopt the
// restored byte values point into the blobs (no copy per value), each ends
// where it does (appending copies), and changing one in place, as an
// operator may, changes no other value or key of its group nor of another
// group. Without adopt nothing points into the blobs.
func TestRestoreGroupsAdoptedValuesPointIntoBlobsAndStayApart(t *testing.T) {
	const groups = 4
	src := newFilledAllKinds(t, groups, "k")
	want := src.snapshots(t, groups)
	for _, adopt := range []bool{false, true} {
		dst := newAllKinds(t, groups)
		gbs := groupBlobs(want, true, rand.New(rand.NewPCG(3, 4)))
		if err := dst.b.RestoreGroups(gbs, adopt); err != nil {
			t.Fatal(err)
		}
		blobOf := map[int][]byte{}
		for _, gb := range gbs {
			blobOf[gb.Group] = gb.Blob
		}
		for g := range groups {
			for k := range dst.entries.Keys(g) {
				e, _ := dst.entries.Get(g, k)
				b, _ := dst.bytes.Get(g, k)
				if in := inside(e.Value, blobOf[g]) && inside(b, blobOf[g]); in != adopt {
					t.Fatalf("adopt=%v: key group %d key %q: values inside the blob: %v", adopt, g, k, in)
				}
				if cap(e.Value) != len(e.Value) || cap(b) != len(b) {
					t.Fatalf("adopt=%v: key group %d key %q: capacity beyond the value's end", adopt, g, k)
				}
			}
		}
		// Change every value of group 1 in place and append to each.
		for k := range dst.entries.Keys(1) {
			e, _ := dst.entries.Get(1, k)
			b, _ := dst.bytes.Get(1, k)
			for _, v := range [][]byte{e.Value, b} {
				for i := range v {
					v[i] = 'Z'
				}
				_ = append(v, "past the end"...)
			}
			e.Count = -1
			dst.entries.Put(1, k, e)
		}
		for g := range groups {
			for k := range src.entries.Keys(g) {
				se, _ := src.entries.Get(g, k)
				sb, _ := src.bytes.Get(g, k)
				de, ok1 := dst.entries.Get(g, k)
				db, ok2 := dst.bytes.Get(g, k)
				if !ok1 || !ok2 {
					t.Fatalf("adopt=%v: key group %d lost key %q", adopt, g, k)
				}
				if g == 1 {
					if de.Count != -1 || strings.Trim(string(de.Value), "Z") != "" || strings.Trim(string(db), "Z") != "" {
						t.Fatalf("adopt=%v: key group 1 key %q: change in place lost: %+v %q", adopt, k, de, db)
					}
					continue
				}
				if de.Count != se.Count || !bytes.Equal(de.Value, se.Value) || !bytes.Equal(db, sb) {
					t.Fatalf("adopt=%v: key group %d key %q changed with group 1: %+v %q, want %+v %q", adopt, g, k, de, db, se, sb)
				}
			}
		}
		if got, want := dst.dump(1), src.dump(1); got != want {
			t.Fatalf("adopt=%v: the other tables of group 1 changed with its byte values:\n%s\nwant\n%s", adopt, got, want)
		}
	}
}

// TestRestoreGroupsCorruptBlobInstallsNone: one damaged blob among several
// fails the call with ErrCorrupt naming its key group, and no group is
// installed, the intact ones included.
func TestRestoreGroupsCorruptBlobInstallsNone(t *testing.T) {
	const groups = 6
	blobs := newFilledAllKinds(t, groups, "new").snapshots(t, groups)
	dst := newFilledAllKinds(t, groups, "old")
	before := make([]string, groups)
	for g := range groups {
		before[g] = dst.dump(g)
	}
	for _, checked := range []bool{false, true} {
		gbs := groupBlobs(blobs, checked, rand.New(rand.NewPCG(5, 6)))
		for i := range gbs {
			if gbs[i].Group == 4 {
				// Damaged before it was stored: its CRC as a whole is
				// that of the damaged bytes, the trailer's is not.
				gbs[i].Blob[len(gbs[i].Blob)/2] ^= 0x40
				gbs[i].CRC = crc32.Checksum(gbs[i].Blob, castagnoli)
			}
		}
		err := dst.b.RestoreGroups(gbs, true)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "key group 4") {
			t.Fatalf("checked=%v: error %v, want ErrCorrupt naming key group 4", checked, err)
		}
		for g := range groups {
			if got := dst.dump(g); got != before[g] {
				t.Fatalf("checked=%v: key group %d changed by a failed restore:\n%s\nwant\n%s", checked, g, got, before[g])
			}
		}
	}
}
