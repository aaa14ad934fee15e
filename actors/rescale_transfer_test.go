package actors

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

func TestTransferSlotsLeaveACoreToTheTasks(t *testing.T) {
	for procs, want := range map[int]int{1: 1, 2: 1, 3: 2, 8: 7} {
		if got := transferSlotsFor(procs); got != want {
			t.Errorf("GOMAXPROCS %d: %d transfers at once, want %d", procs, got, want)
		}
	}
}

// TestTransferSlotsRunOneAtATimeInOrder: with one slot, a second and a third
// transfer wait while the first runs, although the uploader has idle
// workers, and start in the order they came as slots free.
func TestTransferSlotsRunOneAtATimeInOrder(t *testing.T) {
	up := newUploader(nil, 2, 8, time.Minute)
	defer up.stop()
	s := &transferSlots{}
	s.once.Do(func() { s.free = 1 })
	var entered [3]chan struct{}
	var hold [3]chan struct{}
	order := make(chan int, 3)
	for i := range 3 {
		entered[i], hold[i] = make(chan struct{}), make(chan struct{})
		if err := s.submit(up, func(context.Context) {
			order <- i
			close(entered[i])
			<-hold[i]
		}); err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	if r, w := s.counts(); r != 1 || w != 2 {
		t.Fatalf("%d running, %d waiting; want 1 and 2", r, w)
	}
	for i := range 3 {
		select {
		case <-entered[i]:
		case <-time.After(transferWait):
			t.Fatalf("transfer %d did not start within %v of its slot freeing", i, transferWait)
		}
		if r, w := s.counts(); r != 1 || w != 2-i {
			t.Fatalf("transfer %d running: %d running, %d waiting; want 1 and %d", i, r, w, 2-i)
		}
		if got := <-order; got != i {
			t.Fatalf("transfer %d started, want %d", got, i)
		}
		close(hold[i])
	}
	if !poll.Until(transferWait, poll.Every, func() bool { r, w := s.counts(); return r == 0 && w == 0 }) {
		r, w := s.counts()
		t.Fatalf("after all: %d running, %d waiting", r, w)
	}
	s.mu.Lock()
	free := s.free
	s.mu.Unlock()
	if free != 1 {
		t.Fatalf("%d slots free after all, want 1", free)
	}
}

// TestTransferSlotsRefusedStartFreesItsSlot: when the uploader refuses a
// transfer that would start now, the caller gets the refusal (and does the
// work itself) and the slot stays free.
func TestTransferSlotsRefusedStartFreesItsSlot(t *testing.T) {
	up := newUploader(nil, 1, 1, time.Minute)
	up.stop()
	s := &transferSlots{}
	s.once.Do(func() { s.free = 1 })
	if err := s.submit(up, func(context.Context) {}); err == nil {
		t.Fatal("a stopped uploader's refusal was not returned")
	}
	if r, w := s.counts(); r != 0 || w != 0 || s.free != 1 {
		t.Fatalf("%d running, %d waiting, %d free; want 0, 0 and 1", r, w, s.free)
	}
}

// transferWait bounds the waits of the tests above on a busy machine.
const transferWait = time.Minute
