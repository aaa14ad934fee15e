package state

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/cputime"
)

// What incremental checkpoints cost when they do not help: the same state
// and the same updates with and without change tracking (Backend.TrackChanges),
// at 1 % and at 100 % of keys changing between checkpoints. Run the "full"
// and "incr" halves of a cell in alternation (one process each) to compare
// them under the same load.

const (
	costKeys       = 200_000 // keys of the state, round-robin over 128 groups
	costValueBytes = 256
)

// costCells are the shares of keys changing between checkpoints.
var costCells = []int{1, 100}

// costModes names the two halves of each cell.
func costMode(incr bool) string {
	if incr {
		return "incr"
	}
	return "full"
}

// costBackend fills a backend with costKeys entries of costValueBytes
// (samples/bigstate's shape) and, with incr, tracks changes and confirms a
// first checkpoint written whole, as a task does with incremental
// checkpoints before its first delta.
func costBackend(b *testing.B, incr bool) (*Backend, *ValueTable[snapEntry], []string) {
	b.Helper()
	be := NewBackend(128)
	vt := NewValueTable[snapEntry]("value", 128)
	if _, err := be.Register(vt); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, costKeys)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		vt.Put(i%128, keys[i], snapEntry{Count: 1, Value: make([]byte, costValueBytes)})
	}
	if incr {
		be.TrackChanges()
	}
	costCheckpoint(b, be, 1, incr)
	return be, vt, keys
}

// costCheckpoint takes, encodes and confirms checkpoint id as a task with
// asynchronous snapshots does (incremental ones with incr) and returns the
// bytes it wrote.
func costCheckpoint(b *testing.B, be *Backend, id uint64, incr bool) int64 {
	s, err := be.SnapshotAsyncAt(id, be.NonEmptyGroups())
	if err != nil {
		b.Fatal(err)
	}
	var blobs map[int][]byte
	if incr {
		blobs, _, err = s.EncodeIncremental(func(int) bool { return true })
	} else {
		blobs, err = s.Encode()
	}
	if err != nil {
		b.Fatal(err)
	}
	s.Release(be)
	be.Confirm(id)
	var n int64
	for _, blob := range blobs {
		n += int64(len(blob))
	}
	return n
}

// costUpdate is bigstate's update of one key: a read, a change in place of
// the value's bytes, a write.
func costUpdate(vt *ValueTable[snapEntry], g int, key string) {
	v, _ := vt.Get(g, key)
	v.Count++
	v.Value[0]++
	vt.Put(g, key, v)
}

// BenchmarkIncrementalCostEncode is one checkpoint's snapshot (freeze,
// encode, release, confirm) after pct % of the keys changed, with
// (incr) and without (full) change tracking; the updates before it are not
// timed. written-B/op is what the checkpoint wrote; cpu-ns/op the
// process's CPU time in the timed part (less inflated by a busy machine
// than wall time).
func BenchmarkIncrementalCostEncode(b *testing.B) {
	eachCostCell(b, func(b *testing.B, incr bool, be *Backend, vt *ValueTable[snapEntry], keys []string, hot, stride int) {
		var written int64
		var cpu time.Duration
		id := uint64(1)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			for j := range hot {
				i := j * stride
				costUpdate(vt, i%128, keys[i])
			}
			id++
			b.StartTimer()
			c0 := cputime.Now()
			written += costCheckpoint(b, be, id, incr)
			cpu += cputime.Now() - c0
		}
		b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkIncrementalCostUpdate is the per-record cost of noting changed
// keys: one op is one update of a key of the hot set (pct % of the keys,
// in turn), with (incr) and without (full) change tracking. Every costKeys
// updates a checkpoint's snapshot is taken, released and confirmed (not
// encoded: the encoding is BenchmarkIncrementalCostEncode), which closes the
// record of changed keys, as a barrier does. cpu-ns/op is the process's
// CPU time per update.
func BenchmarkIncrementalCostUpdate(b *testing.B) {
	eachCostCell(b, func(b *testing.B, incr bool, be *Backend, vt *ValueTable[snapEntry], keys []string, hot, stride int) {
		groups := be.NonEmptyGroups()
		id := uint64(1)
		j, n := 0, 0
		b.ReportAllocs()
		b.ResetTimer()
		c0 := cputime.Now()
		for range b.N {
			i := j * stride
			costUpdate(vt, i%128, keys[i])
			if j++; j == hot {
				j = 0
			}
			if n++; n == costKeys {
				n = 0
				id++
				s, err := be.SnapshotAsyncAt(id, groups)
				if err != nil {
					b.Fatal(err)
				}
				s.Release(be)
				be.Confirm(id)
			}
		}
		b.ReportMetric(float64((cputime.Now()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// eachCostCell runs body as a sub-benchmark for every share of changing
// keys, without and with change tracking, on a backend filled by
// costBackend; keys[j*stride] for j < hot are the hot set.
func eachCostCell(b *testing.B, body func(b *testing.B, incr bool, be *Backend, vt *ValueTable[snapEntry], keys []string, hot, stride int)) {
	for _, pct := range costCells {
		for _, incr := range []bool{false, true} {
			b.Run(fmt.Sprintf("changing=%d/%s", pct, costMode(incr)), func(b *testing.B) {
				be, vt, keys := costBackend(b, incr)
				hot := len(keys) * pct / 100
				body(b, incr, be, vt, keys, hot, len(keys)/hot)
			})
		}
	}
}
