package actors

import (
	"context"
	"sync"
)

// uploader runs a job's checkpoint I/O off the actors' goroutines: task blobs,
// manifests and deletions. It is owned by the job and stopped with it.
type uploader struct {
	work   chan func(context.Context)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// newUploader starts workers goroutines with a queue of depth jobs.
func newUploader(workers, depth int) *uploader {
	ctx, cancel := context.WithCancel(context.Background())
	u := &uploader{work: make(chan func(context.Context), depth), ctx: ctx, cancel: cancel}
	for i := 0; i < workers; i++ {
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			for {
				select {
				case fn := <-u.work:
					fn(u.ctx)
				case <-u.ctx.Done():
					return
				}
			}
		}()
	}
	return u
}

// submit queues fn. The queue is sized for one checkpoint in flight, so it
// does not fill; after stop, fn is dropped.
func (u *uploader) submit(fn func(context.Context)) {
	select {
	case u.work <- fn:
	case <-u.ctx.Done():
	}
}

// stop cancels pending I/O and waits for the workers; idempotent.
func (u *uploader) stop() {
	u.once.Do(func() {
		u.cancel()
		u.wg.Wait()
	})
}
