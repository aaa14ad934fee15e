package actors

import (
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// dispatchThroughput is how many messages a mailbox runs before it yields,
// as protoactor's default dispatcher.
const dispatchThroughput = 300

// workerDispatcher runs scheduled mailboxes on a few long-lived goroutines.
// protoactor's default dispatcher starts a goroutine for every run of a
// mailbox; a task's run goes deep enough that each new goroutine grew and
// copied its stack, about a tenth of a busy job's CPU. A worker's stack stays
// grown. When no worker is idle the mailbox gets its own goroutine, as
// before, so a mailbox blocked in user code never delays another.
type workerDispatcher struct {
	work chan func()
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

var _ actor.Dispatcher = (*workerDispatcher)(nil)

// newWorkerDispatcher starts n workers; stop ends them.
func newWorkerDispatcher(n int) *workerDispatcher {
	d := &workerDispatcher{work: make(chan func()), done: make(chan struct{})}
	d.wg.Add(n)
	for range n {
		go d.worker()
	}
	return d
}

func (d *workerDispatcher) worker() {
	defer d.wg.Done()
	for {
		select {
		case fn := <-d.work:
			fn()
		case <-d.done:
			return
		}
	}
}

// Schedule hands fn to an idle worker, or runs it on a new goroutine.
func (d *workerDispatcher) Schedule(fn func()) {
	select {
	case d.work <- fn:
	default:
		go fn()
	}
}

// Throughput is the messages a mailbox runs per turn.
func (d *workerDispatcher) Throughput() int { return dispatchThroughput }

// stop ends the workers once they finish what they run; later Schedules get
// their own goroutines.
func (d *workerDispatcher) stop() {
	d.once.Do(func() { close(d.done) })
	d.wg.Wait()
}

// stopWithin is stop that waits at most wait for workers busy in an actor's
// (user) code; such a worker ends by itself when that call returns. It
// reports whether every worker ended in time.
func (d *workerDispatcher) stopWithin(wait time.Duration) bool {
	d.once.Do(func() { close(d.done) })
	ended := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(ended)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ended:
		return true
	case <-t.C:
		return false
	}
}
