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

// asyncFixture is a backend with a value table whose []byte values the task
// changes in place (as samples/bigstate does), a map, a list and a timer
// table.
type asyncFixture struct {
	b      *Backend
	values *ValueTable[[]byte]
	maps   *MapTable[string, int]
	lists  *ListTable[int]
	timers *TimerTable
}

func newAsyncFixture(t *testing.T, maxPar int) *asyncFixture {
	t.Helper()
	f := &asyncFixture{b: NewBackend(maxPar), values: NewValueTable[[]byte]("v", maxPar),
		maps: NewMapTable[string, int]("m", maxPar), lists: NewListTable[int]("l", maxPar), timers: NewTimerTable("t", maxPar)}
	for _, tb := range []Table{f.values, f.maps, f.lists, f.timers} {
		if _, err := f.b.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// step applies one random operation, as a task would.
func (f *asyncFixture) step(r *rand.Rand, keys int) {
	g := r.IntN(f.b.MaxParallelism())
	key := fmt.Sprintf("k%d", r.IntN(keys))
	switch op := r.IntN(100); {
	case op < 40: // read, change in place, write back
		v, ok := f.values.Get(g, key)
		if !ok {
			v = make([]byte, 8)
		}
		v[r.IntN(len(v))]++
		f.values.Put(g, key, v)
	case op < 45:
		v, ok := f.values.Get(g, key)
		if ok {
			v[0] ^= 0xff // in place, no Put: still must not leak
		}
	case op < 52:
		f.values.Delete(g, key)
	case op < 65:
		f.maps.Put(g, key, fmt.Sprint(r.IntN(4)), r.IntN(1000))
	case op < 70:
		f.maps.Delete(g, key, fmt.Sprint(r.IntN(4)))
	case op < 80:
		f.lists.Add(g, key, r.IntN(1000))
	case op < 83:
		f.lists.Clear(g, key)
	case op < 90:
		f.timers.Register(Timer{Group: g, Key: key, At: int64(r.IntN(1000))})
	case op < 92:
		f.timers.SetWatermark(int64(r.IntN(1000)))
	case op < 94:
		f.b.DropGroup(g)
	case op < 96:
		for k, v := range f.values.All(g) {
			if len(v) > 0 {
				v[0]++
				f.values.Put(g, k, v)
			}
			break
		}
	default:
		// restore the group from its current bytes (a rescale moving it back)
		blob, err := f.b.SnapshotGroup(g)
		if err != nil {
			panic(err)
		}
		if err := f.b.RestoreGroup(g, blob); err != nil {
			panic(err)
		}
	}
}

// syncSnapshot is what a synchronous snapshot of every non-empty group gives.
func (f *asyncFixture) syncSnapshot(t *testing.T) ([]int, map[int][]byte) {
	t.Helper()
	groups := f.b.NonEmptyGroups()
	out := map[int][]byte{}
	for _, g := range groups {
		blob, err := f.b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		out[g] = blob
	}
	return groups, out
}

// TestAsyncSnapshotIsTheBarrierState takes an asynchronous snapshot, goes on
// changing the state (in place too) while another goroutine encodes it, and
// demands the bytes of a synchronous snapshot taken at the barrier.
func TestAsyncSnapshotIsTheBarrierState(t *testing.T) {
	for round := range 20 {
		seed := uint64(time.Now().UnixNano()) + uint64(round)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 7))
			f := newAsyncFixture(t, 16)
			for range 3000 {
				f.step(r, 200)
			}
			for ckpt := range 3 {
				groups, want := f.syncSnapshot(t)
				snap, err := f.b.SnapshotAsync(groups)
				if err != nil {
					t.Fatal(err)
				}
				var (
					got    map[int][]byte
					encErr error
					wg     sync.WaitGroup
				)
				wg.Add(1)
				go func() { defer wg.Done(); got, encErr = snap.Encode() }()
				for range 3000 {
					f.step(r, 200)
				}
				wg.Wait()
				if encErr != nil {
					t.Fatalf("checkpoint %d: %v", ckpt, encErr)
				}
				if len(got) != len(want) {
					t.Fatalf("checkpoint %d: %d groups, want %d", ckpt, len(got), len(want))
				}
				for g, w := range want {
					if !bytes.Equal(got[g], w) {
						t.Fatalf("checkpoint %d key group %d: asynchronous snapshot differs from the state at the barrier", ckpt, g)
					}
				}
			}
		})
	}
}

// TestAsyncSnapshotHotKeys mutates a few hot keys in place as fast as it can
// while the snapshot is encoded on another goroutine: none of it may leak.
func TestAsyncSnapshotHotKeys(t *testing.T) {
	f := newAsyncFixture(t, 8)
	for i := range 5000 {
		f.values.Put(i%8, fmt.Sprintf("k%d", i), bytes.Repeat([]byte{byte(i)}, 64))
	}
	groups, want := f.syncSnapshot(t)
	snap, err := f.b.SnapshotAsync(groups)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var got map[int][]byte
	go func() { defer close(done); got, err = snap.Encode() }()
	for n := 0; ; n++ {
		select {
		case <-done:
			if err != nil {
				t.Fatal(err)
			}
			for g, w := range want {
				if !bytes.Equal(got[g], w) {
					t.Fatalf("key group %d: a change after the barrier leaked into the snapshot", g)
				}
			}
			return
		default:
		}
		k := n % 16
		v, _ := f.values.Get(k%8, fmt.Sprintf("k%d", k))
		v[n%64]++
		f.values.Put(k%8, fmt.Sprintf("k%d", k), v)
		f.values.Put(k%8, fmt.Sprintf("new%d", n), []byte{1})
	}
}

// TestAsyncSnapshotReleased: an abandoned snapshot fails to encode and
// stops copying on write; the next one sees the state at its own barrier.
func TestAsyncSnapshotReleased(t *testing.T) {
	f := newAsyncFixture(t, 4)
	f.values.Put(1, "a", []byte{1})
	snap, err := f.b.SnapshotAsync([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	f.values.Put(1, "a", []byte{2})
	snap.Release(f.b)
	if _, err := snap.Encode(); !errors.Is(err, ErrSnapshotReleased) {
		t.Fatalf("encode after release: %v, want ErrSnapshotReleased", err)
	}
	_, want := f.syncSnapshot(t)
	next, err := f.b.SnapshotAsync([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	f.values.Put(1, "a", []byte{3})
	got, err := next.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[1], want[1]) {
		t.Fatal("second snapshot is not the state at its barrier")
	}
}

// TestAsyncSnapshotSupersededIsCompleted: freezing again before the first
// snapshot was encoded completes the first at its own barrier.
func TestAsyncSnapshotSupersededIsCompleted(t *testing.T) {
	f := newAsyncFixture(t, 4)
	f.values.Put(2, "a", []byte{1})
	_, want1 := f.syncSnapshot(t)
	s1, err := f.b.SnapshotAsync([]int{2})
	if err != nil {
		t.Fatal(err)
	}
	f.values.Put(2, "a", []byte{2})
	_, want2 := f.syncSnapshot(t)
	s2, err := f.b.SnapshotAsync([]int{2})
	if err != nil {
		t.Fatal(err)
	}
	f.values.Put(2, "a", []byte{3})
	for i, c := range []struct {
		s    *AsyncSnapshot
		want map[int][]byte
	}{{s1, want1}, {s2, want2}} {
		got, err := c.s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[2], c.want[2]) {
			t.Fatalf("snapshot %d is not the state at its barrier", i+1)
		}
	}
}

// TestAsyncSnapshotRejectsBadGroups: out of range and repeated groups.
func TestAsyncSnapshotRejectsBadGroups(t *testing.T) {
	f := newAsyncFixture(t, 4)
	if _, err := f.b.SnapshotAsync([]int{4}); !errors.Is(err, ErrGroupRange) {
		t.Fatalf("group 4 of 4: %v, want ErrGroupRange", err)
	}
	if _, err := f.b.SnapshotAsync([]int{1, 1}); err == nil {
		t.Fatal("a group listed twice was accepted")
	}
}
