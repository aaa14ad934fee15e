package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// incrementalRun drives a fixture through checkpoints whose snapshots are
// encoded incrementally on another goroutine while the task goes on
// changing hot keys (in place too), and rebuilds the state from each
// completed checkpoint's blobs on a replica the way a restore does: a whole
// blob replaces a group, a delta is applied on it. After every completed
// checkpoint the replica must hold exactly the state at its barrier.
type incrementalRun struct {
	t       *testing.T
	r       *rand.Rand
	f       *asyncFixture
	replica *asyncFixture
	deltas  int // delta blobs applied
}

func newIncrementalRun(t *testing.T, seed uint64, maxPar int) *incrementalRun {
	run := &incrementalRun{t: t, r: rand.New(rand.NewPCG(seed, 11)), f: newAsyncFixture(t, maxPar), replica: newAsyncFixture(t, maxPar)}
	run.f.b.TrackChanges()
	return run
}

// checkpoint takes snapshot id, mutates during its encoding, and completes
// or abandons it; its blobs are encoded on their own or appended to a
// buffer, at random.
func (run *incrementalRun) checkpoint(id uint64, steps, keys int, abort bool) {
	t, f := run.t, run.f
	groups, want := f.syncSnapshot(t)
	snap, err := f.b.SnapshotAsyncAt(id, groups)
	if err != nil {
		t.Fatal(err)
	}
	if abort {
		for range steps {
			f.step(run.r, keys)
		}
		snap.Release(f.b)
		return
	}
	var (
		blobs  map[int][]byte
		deltas map[int]bool
		encErr error
		wg     sync.WaitGroup
	)
	useDelta := map[int]bool{}
	for _, g := range groups {
		useDelta[g] = run.r.IntN(8) != 0 // now and then a group is compacted
	}
	// Blobs of their own, or appended to a buffer with no room, a little
	// or plenty: the parts then encoded in place (encodeTablesInPlace).
	room := []int{-1, 0, 64, 16 << 20}[run.r.IntN(4)]
	wg.Add(1)
	go func() {
		defer wg.Done()
		if room < 0 {
			blobs, deltas, encErr = snap.EncodeIncremental(func(g int) bool { return useDelta[g] })
			return
		}
		var dst []byte
		if room > 0 {
			dst = make([]byte, 0, room)
		}
		var out []byte
		var sections map[int][2]int64
		out, sections, deltas, encErr = snap.EncodeAppend(dst, func(g int) bool { return useDelta[g] })
		blobs = map[int][]byte{}
		for g, sec := range sections {
			blobs[g] = out[sec[0] : sec[0]+sec[1]]
		}
	}()
	for range steps {
		f.step(run.r, keys)
	}
	wg.Wait()
	if encErr != nil {
		t.Fatalf("checkpoint %d: %v", id, encErr)
	}
	inSnap := map[int]bool{}
	for _, g := range groups {
		inSnap[g] = true
		if deltas[g] && !useDelta[g] {
			t.Fatalf("checkpoint %d key group %d: a delta where a whole blob was asked for", id, g)
		}
		if deltas[g] {
			run.deltas++
		}
		if err := run.replica.b.RestoreGroup(g, blobs[g]); err != nil {
			t.Fatalf("checkpoint %d key group %d (delta %v): %v", id, g, deltas[g], err)
		}
	}
	for g := range f.b.MaxParallelism() {
		if !inSnap[g] {
			run.replica.b.DropGroup(g) // a group without state has no section
		}
	}
	f.b.Confirm(id)
	for g := range f.b.MaxParallelism() {
		got, err := run.replica.b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		w := want[g]
		if w == nil {
			if w, err = f.emptyGroupBlob(g); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("checkpoint %d key group %d (delta %v): the state rebuilt from the checkpoints differs from the state at the barrier", id, g, deltas[g])
		}
	}
}

// emptyGroupBlob is the whole blob of a group without state.
func (f *asyncFixture) emptyGroupBlob(g int) ([]byte, error) {
	empty := newAsyncFixtureNoT(f.b.MaxParallelism())
	return empty.b.SnapshotGroup(g)
}

func newAsyncFixtureNoT(maxPar int) *asyncFixture {
	f := &asyncFixture{b: NewBackend(maxPar), values: NewValueTable[[]byte]("v", maxPar),
		maps: NewMapTable[string, int]("m", maxPar), lists: NewListTable[int]("l", maxPar), timers: NewTimerTable("t", maxPar)}
	for _, tb := range []Table{f.values, f.maps, f.lists, f.timers} {
		if _, err := f.b.Register(tb); err != nil {
			panic(err)
		}
	}
	return f
}

// TestIncrementalDeltaIsTheBarrierState: deltas encoded asynchronously while
// hot keys change, applied in order on the state of the previous completed
// checkpoint, give exactly the state at each barrier; an abandoned
// checkpoint's changes go into the next delta; deletes travel as tombstones.
func TestIncrementalDeltaIsTheBarrierState(t *testing.T) {
	for round := range 12 {
		seed := uint64(time.Now().UnixNano()) + uint64(round)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			run := newIncrementalRun(t, seed, 16)
			for range 3000 {
				run.f.step(run.r, 300)
			}
			for id := uint64(1); id <= 12; id++ {
				run.checkpoint(id, 150, 300, run.r.IntN(5) == 0)
			}
			if run.deltas == 0 {
				t.Fatal("no group was ever written as a delta")
			}
		})
	}
}

// TestIncrementalDeltaHotKeysOnly: with a few keys changing, a delta holds
// only them and is far smaller than the whole group; deleting a key writes
// a tombstone that removes it on restore; a group most of whose keys
// changed is written whole.
func TestIncrementalDeltaHotKeysOnly(t *testing.T) {
	f := newAsyncFixture(t, 1)
	f.b.TrackChanges()
	for i := range 2000 {
		f.values.Put(0, fmt.Sprintf("k%04d", i), bytes.Repeat([]byte{byte(i)}, 32))
	}
	encode := func(id uint64) ([]byte, bool) {
		t.Helper()
		s, err := f.b.SnapshotAsyncAt(id, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		blobs, deltas, err := s.EncodeIncremental(func(int) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		f.b.Confirm(id)
		return blobs[0], deltas[0]
	}
	base, isDelta := encode(1)
	if isDelta {
		t.Fatal("the first checkpoint wrote a delta: there is nothing to build on")
	}
	f.values.Put(0, "k0007", []byte("changed"))
	f.values.Delete(0, "k0009")
	f.values.Put(0, "zz-new", []byte("new"))
	delta, isDelta := encode(2)
	if !isDelta {
		t.Fatal("the second checkpoint wrote the group whole")
	}
	if len(delta)*20 > len(base) {
		t.Fatalf("delta of 3 keys is %d bytes, whole group %d", len(delta), len(base))
	}
	r := newAsyncFixture(t, 1)
	for _, blob := range [][]byte{base, delta} {
		if err := r.b.RestoreGroup(0, blob); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := r.values.Get(0, "k0009"); ok {
		t.Fatal("a deleted key came back after the delta")
	}
	if v, _ := r.values.Get(0, "k0007"); string(v) != "changed" {
		t.Fatalf("k0007 = %q after the delta", v)
	}
	if v, _ := r.values.Get(0, "zz-new"); string(v) != "new" {
		t.Fatalf("zz-new = %q after the delta", v)
	}
	if n := r.values.Len(0); n != 2000 {
		t.Fatalf("%d keys after the delta, want 2000", n)
	}
	for i := range 1500 {
		f.values.Put(0, fmt.Sprintf("k%04d", i), []byte("most"))
	}
	if _, isDelta := encode(3); isDelta {
		t.Fatal("a group three quarters of whose keys changed was written as a delta")
	}
	// A restored group is written whole next: the delta would build on
	// state the checkpoint does not know.
	if err := f.b.RestoreGroup(0, base); err != nil {
		t.Fatal(err)
	}
	if _, isDelta := encode(4); isDelta {
		t.Fatal("a group replaced by a restore was written as a delta")
	}
}

// TestIncrementalDeltaCorrupt: a damaged delta fails its checksum and
// changes nothing.
func TestIncrementalDeltaCorrupt(t *testing.T) {
	f := newAsyncFixture(t, 1)
	f.b.TrackChanges()
	for i := range 10 {
		f.values.Put(0, fmt.Sprint(i), []byte{byte(i)})
	}
	f.values.Put(0, "a", []byte{1})
	s, _ := f.b.SnapshotAsyncAt(1, []int{0})
	blobs, _, err := s.EncodeIncremental(func(int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	f.b.Confirm(1)
	f.values.Put(0, "a", []byte{2})
	s, _ = f.b.SnapshotAsyncAt(2, []int{0})
	d, deltas, err := s.EncodeIncremental(func(int) bool { return true })
	if err != nil || !deltas[0] {
		t.Fatalf("delta: %v %v", err, deltas)
	}
	r := newAsyncFixture(t, 1)
	if err := r.b.RestoreGroup(0, blobs[0]); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(d[0])
	bad[len(bad)/2] ^= 0x40
	if err := r.b.RestoreGroup(0, bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt delta: %v, want ErrCorrupt", err)
	}
	if v, _ := r.values.Get(0, "a"); !bytes.Equal(v, []byte{1}) {
		t.Fatalf("a corrupt delta changed the state: a = %v", v)
	}
}

// TestIncrementalHalfChangedOverTwoEpochsIsWhole: the changes of a
// checkpoint not yet confirmed go into the next delta, so two epochs that
// each changed 40 % of a group's keys (neither most of them) add up to 80
// %: the next snapshot writes the group whole, and a delta again once only
// a few keys changed since a confirmed one.
func TestIncrementalHalfChangedOverTwoEpochsIsWhole(t *testing.T) {
	f := newAsyncFixture(t, 1)
	f.b.TrackChanges()
	for i := range 1000 {
		f.values.Put(0, fmt.Sprintf("k%04d", i), []byte{byte(i)})
	}
	encode := func(id uint64, confirm bool) bool {
		t.Helper()
		s, err := f.b.SnapshotAsyncAt(id, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		_, deltas, err := s.EncodeIncremental(func(int) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		s.Release(f.b)
		if confirm {
			f.b.Confirm(id)
		}
		return deltas[0]
	}
	change := func(from, to int) {
		for i := from; i < to; i++ {
			f.values.Put(0, fmt.Sprintf("k%04d", i), []byte("changed"))
		}
	}
	encode(1, true)
	change(0, 400)
	if !encode(2, false) { // not confirmed: its changes stay for the next delta
		t.Fatal("40 % of the keys changed: the group was written whole, want a delta")
	}
	change(400, 800)
	if encode(3, false) {
		t.Fatal("80 % of the keys changed since the confirmed checkpoint (two epochs of 40 %): wrote a delta, want the group whole")
	}
	f.b.Confirm(3)
	change(0, 10)
	if !encode(4, true) {
		t.Fatal("10 keys changed since the confirmed checkpoint: the group was written whole, want a delta")
	}
}
