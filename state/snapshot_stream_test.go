package state

import (
	"bytes"
	"errors"
	"hash/crc32"
	"strconv"
	"syscall"
	"testing"
)

// chunkWriter keeps what it is given, write by write; from failAt on
// (1-based; 0: never) every write fails with err.
type chunkWriter struct {
	writes [][]byte
	failAt int
	err    error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if w.failAt > 0 && len(w.writes)+1 >= w.failAt {
		w.writes = append(w.writes, nil)
		return 0, w.err
	}
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

// fillLargeGroups gives group g of f (g+1)*40 keys of 8 KiB: groups of
// 320 KiB to 2.5 MiB, around streamChunk.
func fillLargeGroups(f *asyncFixture, groups int) {
	for g := range groups {
		for i := range (g + 1) * 40 {
			f.values.Put(g, "k"+strconv.Itoa(i), bytes.Repeat([]byte{byte(g), byte(i)}, 4096))
		}
	}
}

// TestEncodeStreamWritesTheBarriersBlobs: EncodeStream writes, in the order
// of Groups, each group's blob as a synchronous snapshot at the barrier
// gives it, changes made meanwhile left out; it writes once it holds
// streamChunk bytes or more, in whole blocks of streamAlign but the last,
// so it never holds more than that and one group; its sections, checksums and byte count describe what it wrote;
// a group written is not kept.
func TestEncodeStreamWritesTheBarriersBlobs(t *testing.T) {
	f := newAsyncFixture(t, 8)
	fillLargeGroups(f, 8)
	groups, want := f.syncSnapshot(t)
	s, err := f.b.SnapshotAsync(groups)
	if err != nil {
		t.Fatal(err)
	}
	for g := range 8 { // after the barrier: must not leak
		v, _ := f.values.Get(g, "k0")
		v[0]++
		f.values.Put(g, "new", []byte{9})
	}
	w := &chunkWriter{}
	st, buf, err := s.EncodeStream(w, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := bytes.Join(w.writes, nil)
	if st.Bytes != int64(len(all)) {
		t.Fatalf("Bytes %d, %d written", st.Bytes, len(all))
	}
	largest := 0
	at := int64(0)
	for _, g := range groups {
		sec := st.Sections[g]
		if sec[0] != at {
			t.Fatalf("group %d at %d, want %d: not written in the order of Groups", g, sec[0], at)
		}
		at += sec[1]
		blob := all[sec[0] : sec[0]+sec[1]]
		if !bytes.Equal(blob, want[g]) {
			t.Fatalf("group %d: written blob is not the state at the barrier", g)
		}
		if st.CRCs[g] != crc32.Checksum(blob, castagnoli) {
			t.Fatalf("group %d: CRC %08x, blob's %08x", g, st.CRCs[g], crc32.Checksum(blob, castagnoli))
		}
		largest = max(largest, len(blob))
	}
	if at != st.Bytes || len(st.Deltas) != 0 {
		t.Fatalf("%d bytes past the last group, %d deltas", st.Bytes-at, len(st.Deltas))
	}
	if len(w.writes) < 2 {
		t.Fatalf("%d writes of %d bytes: the groups were not streamed", len(w.writes), len(all))
	}
	for i, p := range w.writes {
		if i < len(w.writes)-1 && len(p) < streamChunk {
			t.Fatalf("write %d of %d bytes, under streamChunk before the last", i, len(p))
		}
		if i < len(w.writes)-1 && len(p)%streamAlign != 0 {
			t.Fatalf("write %d of %d bytes, not whole blocks of %d before the last", i, len(p), streamAlign)
		}
		if len(p) >= streamChunk+largest {
			t.Fatalf("write %d of %d bytes: held more than streamChunk and a group (%d)", i, len(p), largest)
		}
	}
	if cap(buf) >= 2*(streamChunk+largest) {
		t.Fatalf("buffer grew to %d bytes", cap(buf))
	}
	if _, err := s.Encode(); !errors.Is(err, ErrSnapshotAppended) {
		t.Fatalf("encoded again: %v, want ErrSnapshotAppended", err)
	}
}

// TestEncodeStreamFinishesAfterAFailedWrite: a failed write (a full disk)
// stops the writing, not the encoding: every group is encoded all the same,
// so the task has nothing of the snapshot left to encode at its next
// barrier and its copies on write end; the error wraps the write's.
func TestEncodeStreamFinishesAfterAFailedWrite(t *testing.T) {
	f := newAsyncFixture(t, 8)
	fillLargeGroups(f, 8)
	groups, _ := f.syncSnapshot(t)
	s, err := f.b.SnapshotAsync(groups)
	if err != nil {
		t.Fatal(err)
	}
	w := &chunkWriter{failAt: 1, err: syscall.ENOSPC}
	_, _, err = s.EncodeStream(w, nil, nil)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("EncodeStream: %v, want the write's ENOSPC", err)
	}
	if len(w.writes) != 1 {
		t.Fatalf("%d writes: went on writing after the failed one", len(w.writes))
	}
	for _, g := range groups {
		if !s.gates[g].finished.Load() {
			t.Fatalf("group %d not encoded after the failed write: left to the task", g)
		}
	}
}
