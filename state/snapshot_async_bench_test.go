package state

import (
	"io"
	"strconv"
	"testing"
)

// snapEntry is samples/bigstate's value shape: a count and a byte slice.
type snapEntry struct {
	Count int64  `msgpack:"c"`
	Value []byte `msgpack:"v"`
}

func benchBackend(b *testing.B, keys, valueBytes int) (*Backend, *ValueTable[snapEntry]) {
	b.Helper()
	be := NewBackend(128)
	vt := NewValueTable[snapEntry]("value", 128)
	if _, err := be.Register(vt); err != nil {
		b.Fatal(err)
	}
	for i := range keys {
		vt.Put(i%128, "k"+strconv.Itoa(i), snapEntry{Count: 1, Value: make([]byte, valueBytes)})
	}
	return be, vt
}

// BenchmarkSnapshotSync encodes every group on the caller, as a
// synchronous snapshot does at the barrier.
func BenchmarkSnapshotSync(b *testing.B) {
	be, _ := benchBackend(b, 50000, 256)
	groups := be.NonEmptyGroups()
	b.ResetTimer()
	for range b.N {
		for _, g := range groups {
			if _, err := be.SnapshotGroup(g); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSnapshotAsyncFreeze is the task's part of an asynchronous
// snapshot: the view at the barrier.
func BenchmarkSnapshotAsyncFreeze(b *testing.B) {
	be, _ := benchBackend(b, 50000, 256)
	groups := be.NonEmptyGroups()
	b.ResetTimer()
	for range b.N {
		s, err := be.SnapshotAsync(groups)
		if err != nil {
			b.Fatal(err)
		}
		s.Release(be)
	}
}

// BenchmarkSnapshotAsyncEncode is the encoder's part, with nothing touched.
func BenchmarkSnapshotAsyncEncode(b *testing.B) {
	be, _ := benchBackend(b, 50000, 256)
	groups := be.NonEmptyGroups()
	b.ResetTimer()
	for range b.N {
		s, err := be.SnapshotAsync(groups)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotAsyncTaskChangesAll is the task's cost of copy on write
// at a checkpoint where it changes every key before the encoder reaches
// it, as a job whose hot set is all its keys does: a Get and a Put of each,
// which saves each value once. Freezing and encoding are not timed; the
// snapshots follow one another as checkpoints do.
func BenchmarkSnapshotAsyncTaskChangesAll(b *testing.B) {
	const keys = 50000
	be, vt := benchBackend(b, keys, 256)
	names := make([]string, keys)
	for i := range names {
		names[i] = "k" + strconv.Itoa(i)
	}
	groups := be.NonEmptyGroups()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, err := be.SnapshotAsync(groups)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i, key := range names {
			v, _ := vt.Get(i%128, key)
			v.Count++
			vt.Put(i%128, key, v)
		}
		b.StopTimer()
		if _, err := s.Encode(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
}

// BenchmarkSnapshotAsyncEncodeLarge is the encoder's part at the size of
// `node bench state`: a million keys of 256 bytes (about 270 MB encoded),
// appended into a buffer reused from one snapshot to the next as the
// task's uploader does, every key's listing and slot kept from the last
// snapshot. Its misses on slots and values dominate: claimsAhead is for
// them.
func BenchmarkSnapshotAsyncEncodeLarge(b *testing.B) {
	benchLargeSnapshots(b, func(s *AsyncSnapshot, buf []byte) ([]byte, error) {
		buf, _, _, err := s.EncodeAppend(buf[:0], nil)
		return buf, err
	})
}

// BenchmarkSnapshotAsyncStreamLarge is BenchmarkSnapshotAsyncEncodeLarge
// as the uploader streams a checkpoint (EncodeStream): the groups gathered
// in a buffer of about streamChunk, reused from chunk to chunk and from
// one snapshot to the next, and written (here to io.Discard) chunk by
// chunk.
func BenchmarkSnapshotAsyncStreamLarge(b *testing.B) {
	benchLargeSnapshots(b, func(s *AsyncSnapshot, buf []byte) ([]byte, error) {
		_, buf, err := s.EncodeStream(io.Discard, buf, nil)
		return buf, err
	})
}

// benchLargeSnapshots times encode on snapshots of a million keys of 256
// bytes, the buffer it returns handed to the next, per key.
func benchLargeSnapshots(b *testing.B, encode func(s *AsyncSnapshot, buf []byte) ([]byte, error)) {
	const keys = 1_000_000
	be, _ := benchBackend(b, keys, 256)
	groups := be.NonEmptyGroups()
	var buf []byte
	for i := range b.N + 1 { // the first lists and sorts the keys, untimed
		if i == 1 {
			b.ResetTimer()
		}
		s, err := be.SnapshotAsync(groups)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = encode(s, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
}
