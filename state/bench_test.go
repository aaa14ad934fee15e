package state

import (
	"hash/crc32"
	"strconv"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/cputime"
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
// same key, over 1000 and over 1 M keys.
func BenchmarkValueTableGetPut(b *testing.B) {
	for _, n := range []int{1000, 1 << 20} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchGetPut(b, n) })
	}
}

func benchGetPut(b *testing.B, n int) {
	const maxP = 128
	keys, groups := benchKeys(n, maxP)
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

// benchEntry is bigstate's per-key state: a count and a value of bytes.
type benchEntry struct {
	Count int64  `msgpack:"c"`
	Value []byte `msgpack:"v"`
}

// taskBlobs snapshots groups key groups of perGroup keys each, every key
// holding a benchEntry of valueBytes bytes, as one task of bigstate holds
// them; it returns the blobs by group and their total size.
func taskBlobs(b *testing.B, groups, perGroup, valueBytes int) ([][]byte, int64) {
	const maxP = 128
	be := NewBackend(maxP)
	t := NewValueTable[benchEntry]("value", maxP)
	if _, err := be.Register(t); err != nil {
		b.Fatal(err)
	}
	blobs := make([][]byte, groups)
	var size int64
	for g := range groups {
		for i := range perGroup {
			v := make([]byte, valueBytes)
			for j := range v {
				v[j] = byte(i + j)
			}
			t.Put(g, "k"+strconv.Itoa(g*perGroup+i), benchEntry{Count: int64(i), Value: v})
		}
		blob, err := be.SnapshotGroup(g)
		if err != nil {
			b.Fatal(err)
		}
		blobs[g], size = blob, size+int64(len(blob))
		be.DropGroup(g)
	}
	return blobs, size
}

// BenchmarkBackendRestoreTask restores 64 key groups of 2048 keys × 256 B
// (one bigstate task's share of 131072 keys, about 36 MB) into a fresh
// backend: the decoding half of a task's restore.
// "checked" passes each blob's CRC-32C, as a restore from a checkpoint
// store does.
func BenchmarkBackendRestoreTask(b *testing.B) {
	const groups, perGroup = 64, 2048
	blobs, size := taskBlobs(b, groups, perGroup, 256)
	sums := make([]uint32, len(blobs))
	for g, blob := range blobs {
		sums[g] = crc32.Checksum(blob, castagnoli)
	}
	for _, checked := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "checked"}[checked], func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			c0 := cputime.Now()
			for b.Loop() {
				be := NewBackend(128)
				t := NewValueTable[benchEntry]("value", 128)
				if _, err := be.Register(t); err != nil {
					b.Fatal(err)
				}
				for g, blob := range blobs {
					var err error
					if checked {
						err = be.RestoreGroupChecked(g, blob, sums[g])
					} else {
						err = be.RestoreGroup(g, blob)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, c0)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(groups*perGroup), "ns/key")
		})
	}
}

// reportCPU reports the process's CPU time per op since start (of the
// benchmark loop), when it can be measured.
func reportCPU(b *testing.B, start time.Duration) {
	if now := cputime.Now(); now > 0 {
		b.ReportMetric(float64(now-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}
