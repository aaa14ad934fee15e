package state

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/weirstream/weir/internal/poll"
)

// heldValue is a value whose encoding, once its point is armed, closes
// entered and blocks until hold is closed: it holds the goroutine that
// encodes a snapshot in the middle of a key group, as a descheduled encoder
// would be.
type heldValue struct {
	N  int
	at *holdPoint
}

// holdPoint is where a heldValue's encoding stops, once.
type holdPoint struct {
	armed   bool // set before the encoding goroutine starts
	hold    chan struct{}
	entered chan struct{}
}

func (v heldValue) EncodeMsgpack(e *msgpack.Encoder) error {
	if p := v.at; p != nil && p.armed {
		p.armed = false
		close(p.entered)
		<-p.hold
	}
	return e.EncodeInt(int64(v.N))
}

// TestAsyncSnapshotTaskNeverWaitsForHeldEncoder holds the encoder inside
// one entry of a key group and has the task read, change in place, add and
// delete the group's other keys meanwhile: the task must get through while
// the encoder is still held, and the snapshot must still be the state at
// the barrier.
func TestAsyncSnapshotTaskNeverWaitsForHeldEncoder(t *testing.T) {
	const g = 1
	b := NewBackend(4)
	held := NewValueTable[heldValue]("held", 4)
	bytesT := NewValueTable[[]byte]("bytes", 4)
	maps := NewMapTable[string, int]("maps", 4)
	lists := NewListTable[int]("lists", 4)
	for _, tb := range []Table{held, bytesT, maps, lists} {
		if _, err := b.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		k := fmt.Sprintf("k%03d", i)
		held.Put(g, k, heldValue{N: i})
		bytesT.Put(g, k, []byte{byte(i), 0})
		maps.Put(g, k, "a", i)
		lists.Add(g, k, i)
	}
	// The encoder stops in the middle of the held table's group, at k100.
	hold, entered := make(chan struct{}), make(chan struct{})
	at := &holdPoint{hold: hold, entered: entered}
	held.Put(g, "k100", heldValue{N: 100, at: at})
	want, err := b.SnapshotGroup(g)
	if err != nil {
		t.Fatal(err)
	}
	at.armed = true
	snap, err := b.SnapshotAsync([]int{g})
	if err != nil {
		t.Fatal(err)
	}
	var got map[int][]byte
	var encErr error
	encoded := make(chan struct{})
	go func() { defer close(encoded); got, encErr = snap.Encode() }()
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	defer func() {
		release()
		<-encoded
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the encoder never reached the held entry")
	}

	// The task: every table of the held group, keys before and after the
	// held one, in place and through the map; on another goroutine only so
	// that a task stuck behind the encoder fails the test instead of
	// hanging it.
	taskDone := make(chan struct{})
	go func() {
		defer close(taskDone)
		for i := range 200 {
			if i == 100 {
				continue
			}
			k := fmt.Sprintf("k%03d", i)
			v, _ := held.Get(g, k)
			v.N += 1000
			held.Put(g, k, v)
			if bv, ok := bytesT.Get(g, k); ok {
				bv[1] = 0xff // in place, no Put
			}
			maps.Put(g, k, "b", i)
			lists.Add(g, k, -i)
			if i%10 == 0 {
				held.Delete(g, k)
				maps.Clear(g, k)
				lists.Clear(g, k)
			}
			held.Put(g, "new"+k, heldValue{N: -i})
		}
		for range bytesT.All(g) {
		}
	}()
	select {
	case <-taskDone:
	case <-time.After(30 * time.Second):
		release()
		<-taskDone
		t.Fatal("the task waited for the encoder held in the middle of the key group")
	}
	select {
	case <-encoded:
		t.Fatal("the encoder finished while held")
	default:
	}
	release()
	<-encoded
	if encErr != nil {
		t.Fatal(encErr)
	}
	if !bytes.Equal(got[g], want) {
		t.Fatal("a change the task made while the encoder was held leaked into the snapshot")
	}
}

// TestAsyncSnapshotReleasedWhileEncoderHeld releases a snapshot whose
// encoder is held inside an entry: once Release returns the encoder reads
// no live value any more (the race detector would see it read the values
// the task then changes in place) and Encode fails with
// ErrSnapshotReleased.
func TestAsyncSnapshotReleasedWhileEncoderHeld(t *testing.T) {
	const g = 2
	b := NewBackend(4)
	held := NewValueTable[heldValue]("held", 4)
	bytesT := NewValueTable[[]byte]("z-bytes", 4) // encoded after held
	for _, tb := range []Table{held, bytesT} {
		if _, err := b.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	hold, entered := make(chan struct{}), make(chan struct{})
	at := &holdPoint{hold: hold, entered: entered}
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		v := heldValue{N: i}
		if i == 10 {
			v.at = at
		}
		held.Put(g, k, v)
		bytesT.Put(g, k, []byte{byte(i)})
	}
	at.armed = true
	snap, err := b.SnapshotAsync([]int{g})
	if err != nil {
		t.Fatal(err)
	}
	var encErr error
	encoded := make(chan struct{})
	go func() { defer close(encoded); _, encErr = snap.Encode() }()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		close(hold)
		t.Fatal("the encoder never reached the held entry")
	}
	releasing := make(chan struct{})
	go func() { defer close(releasing); snap.Release(b) }()
	gt := &snap.gates[g]
	waiting := poll.Until(30*time.Second, poll.Every, func() bool {
		gt.mu.Lock()
		defer gt.mu.Unlock()
		return gt.waiters.Load() > 0
	})
	close(hold) // Release waits for the entry being read, no longer
	if !waiting {
		<-releasing
		t.Fatal("Release did not wait for the entry the encoder was reading")
	}
	<-releasing
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		v, _ := held.Get(g, k)
		v.N++
		held.Put(g, k, v)
		if bv, ok := bytesT.Get(g, k); ok {
			bv[0]++
		}
		held.Put(g, "new"+k, heldValue{})
	}
	<-encoded
	if !errors.Is(encErr, ErrSnapshotReleased) {
		t.Fatalf("encode of a released snapshot: %v, want ErrSnapshotReleased", encErr)
	}
}
