package state

import (
	"fmt"
	"hash/crc32"
	"testing"
)

// TestSnapshotCRCIsTheBlobs: the CRC-32C a snapshot reports for a key group
// is that of the group's blob as handed out, for a whole blob, a delta, a
// blob appended to the caller's buffer, and one the task encoded itself
// (the next snapshot was taken first) and copied in.
func TestSnapshotCRCIsTheBlobs(t *testing.T) {
	f := newAsyncFixture(t, 4)
	f.b.TrackChanges()
	for i := range 400 {
		f.values.Put(i%4, fmt.Sprintf("k%03d", i), []byte(fmt.Sprint(i)))
	}
	f.lists.Add(1, "l", 7)
	groups := []int{0, 1, 2, 3}
	check := func(name string, s *AsyncSnapshot, blobs map[int][]byte) {
		t.Helper()
		for _, g := range groups {
			got, ok := s.CRC(g)
			if !ok {
				t.Fatalf("%s: key group %d: no CRC", name, g)
			}
			if want := crc32.Checksum(blobs[g], castagnoli); got != want {
				t.Fatalf("%s: key group %d: CRC %08x, the blob's is %08x", name, g, got, want)
			}
		}
	}
	s1, err := f.b.SnapshotAsyncAt(1, groups)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s1.CRC(0); ok {
		t.Fatal("a CRC for a group not encoded yet")
	}
	whole, err := s1.Encode()
	if err != nil {
		t.Fatal(err)
	}
	check("whole", s1, whole)
	f.b.Confirm(1)

	f.values.Put(2, "k002", []byte("changed"))
	f.values.Delete(2, "k006")
	s2, err := f.b.SnapshotAsyncAt(2, groups)
	if err != nil {
		t.Fatal(err)
	}
	out, sections, deltas, err := s2.EncodeAppend(nil, func(int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if !deltas[2] {
		t.Fatal("key group 2 was not written as a delta")
	}
	cut := func(sections map[int][2]int64, out []byte) map[int][]byte {
		m := map[int][]byte{}
		for g, sec := range sections {
			m[g] = out[sec[0] : sec[0]+sec[1]]
		}
		return m
	}
	check("appended deltas", s2, cut(sections, out))
	f.b.Confirm(2)

	// The task encodes snapshot 3's groups itself when snapshot 4 is taken
	// before 3 was encoded; 3 then copies them in.
	f.values.Put(1, "k001", []byte("again"))
	s3, err := f.b.SnapshotAsyncAt(3, groups)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.SnapshotAsyncAt(4, groups); err != nil {
		t.Fatal(err)
	}
	out, sections, _, err = s3.EncodeAppend([]byte("prefix"), func(int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	check("encoded by the task, copied in", s3, cut(sections, out))
}
