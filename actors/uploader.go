package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errUploadsFull is the uploader refusing work because its queue is full: the
// store is slower than the checkpoints, and the caller declines instead of
// waiting.
var errUploadsFull = errors.New("checkpoint upload queue full")

// errUploaderStopped is the uploader refusing work after stop.
var errUploaderStopped = errors.New("checkpoint uploader stopped")

// uploader runs a job's checkpoint I/O off the actors' goroutines: task blobs,
// manifests and deletions. It never blocks its caller: its queue is bounded
// and refuses work when full, and every piece of work runs with a deadline,
// so a hung store fails checkpoints, not the actors that take them. It is
// owned by the job and stopped with it.
type uploader struct {
	work     chan func(context.Context)
	deadline time.Duration
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	once     sync.Once

	mu      sync.Mutex
	pending int           // submitted and not yet returned
	idle    chan struct{} // closed when pending falls to 0 (made by drain)
	closing bool          // drain began: no new work
	quit    <-chan struct{}
}

// newUploader starts workers goroutines with a queue of depth jobs, each job
// given at most deadline (which must be positive) to finish. The workers end
// at stop or when quit (the node's, closed by its Shutdown, which does not
// stop the job's actors) is closed; a nil quit never is.
func newUploader(quit <-chan struct{}, workers, depth int, deadline time.Duration) *uploader {
	ctx, cancel := context.WithCancel(context.Background())
	u := &uploader{work: make(chan func(context.Context), depth), deadline: deadline, ctx: ctx, cancel: cancel, quit: quit}
	for i := 0; i < workers; i++ {
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			for {
				select {
				case fn := <-u.work:
					u.run(fn)
				case <-u.ctx.Done():
					return
				case <-quit:
					return
				}
			}
		}()
	}
	return u
}

// run calls fn with a context that ends at the deadline or at stop.
func (u *uploader) run(fn func(context.Context)) {
	defer u.done()
	ctx, cancel := context.WithTimeout(u.ctx, u.deadline)
	defer cancel()
	fn(ctx)
}

// done counts a piece of work as returned.
func (u *uploader) done() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.pending--
	if u.pending == 0 && u.idle != nil {
		close(u.idle)
		u.idle = nil
	}
}

// submit queues fn without blocking. It returns errUploadsFull when the queue
// is full and errUploaderStopped after stop; fn then never runs, and the
// caller turns the refusal into a declined or failed checkpoint.
func (u *uploader) submit(fn func(context.Context)) error {
	if u.ctx.Err() != nil {
		return errUploaderStopped
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closing {
		return errUploaderStopped
	}
	select {
	case u.work <- fn:
		u.pending++
		return nil
	default:
		return fmt.Errorf("%w (%d queued)", errUploadsFull, cap(u.work))
	}
}

// drain lets the queued and running work finish, for at most bound (or
// until the node quits: its workers then run nothing more), then stops; it
// refuses new work at once.
func (u *uploader) drain(bound time.Duration) {
	u.mu.Lock()
	u.closing = true
	var idle chan struct{}
	if u.pending > 0 && u.ctx.Err() == nil {
		if u.idle == nil {
			u.idle = make(chan struct{})
		}
		idle = u.idle
	}
	u.mu.Unlock()
	if idle != nil {
		t := time.NewTimer(bound)
		select {
		case <-idle:
		case <-t.C:
		case <-u.quit:
		}
		t.Stop()
	}
	u.stop()
}

// stop cancels pending I/O and waits for the workers; idempotent.
func (u *uploader) stop() {
	u.once.Do(func() {
		u.cancel()
		u.wg.Wait()
	})
}
