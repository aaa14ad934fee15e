package state

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// countedValue counts its encodings in n and, at the first, closes first.
type countedValue struct {
	N     int
	n     *atomic.Int64
	first chan struct{}
}

func (v countedValue) EncodeMsgpack(e *msgpack.Encoder) error {
	if v.n.Add(1) == 1 {
		close(v.first)
	}
	return e.EncodeInt(int64(v.N))
}

// TestEncoderOffTheTaskLetsOthersRun: on one processor, a goroutine that
// becomes runnable while an encoder goroutine works through a large key
// group runs after a few entries, not once the group is done: the encoder
// yields (yieldEvery) instead of keeping the processor until the scheduler
// preempts it, which a job's goroutines would feel as ~10 ms of latency.
func TestEncoderOffTheTaskLetsOthersRun(t *testing.T) {
	const g, keys = 1, 50000
	b := NewBackend(4)
	vt := NewValueTable[countedValue]("counted", 4)
	if _, err := b.Register(vt); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	first := make(chan struct{})
	for i := range keys {
		vt.Put(g, fmt.Sprintf("k%06d", i), countedValue{N: i, n: &n, first: first})
	}
	snap, err := b.SnapshotAsync([]int{g})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	seen := make(chan int64, 1)
	go func() { // runnable once the encoder encoded its first entry
		<-first
		seen <- n.Load()
	}()
	encoded := make(chan error, 1)
	go func() {
		_, err := snap.Encode()
		encoded <- err
	}()
	if err := <-encoded; err != nil {
		t.Fatal(err)
	}
	// Yielding, it runs within yieldEvery entries of its first, whatever
	// the machine's speed; without, only when the scheduler preempts the
	// encoder after ~10 ms (thousands of entries here) or at the end.
	if at := <-seen; at > 4*yieldEvery {
		t.Fatalf("the waiting goroutine ran after %d of %d entries were encoded, want within %d", at, keys, 4*yieldEvery)
	}
}
