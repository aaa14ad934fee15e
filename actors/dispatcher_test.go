package actors

import (
	"sync"
	"testing"
	"time"
)

// TestWorkerDispatcherNeverWaits: with every worker blocked in a mailbox,
// another Schedule still runs at once (on its own goroutine); after stop,
// the workers are gone and Schedule still runs work.
func TestWorkerDispatcherNeverWaits(t *testing.T) {
	const workers = 2
	d := newWorkerDispatcher(workers)
	block := make(chan struct{})
	var started sync.WaitGroup
	started.Add(workers + 1)
	for range workers + 1 {
		d.Schedule(func() {
			started.Done()
			<-block
		})
	}
	ran := make(chan struct{})
	d.Schedule(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a Schedule waited for a busy worker")
	}
	started.Wait() // every blocked function did start
	close(block)
	d.stop()
	after := make(chan struct{})
	d.Schedule(func() { close(after) })
	select {
	case <-after:
	case <-time.After(10 * time.Second):
		t.Fatal("Schedule after stop did not run")
	}
	if d.Throughput() != dispatchThroughput {
		t.Fatalf("throughput %d", d.Throughput())
	}
}
