package actors

import "time"

// ticker calls fn every interval on one goroutine owned by the job actor,
// until stopped or until its node shuts down (a node's Shutdown does not
// stop its actors, so an actor's Stopping may never come).
type ticker struct {
	stop chan struct{}
	done chan struct{}
}

// startTicker starts calling fn every interval until Stop or until quit is
// closed.
func startTicker(quit <-chan struct{}, every time.Duration, fn func()) *ticker {
	t := &ticker{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-quit:
				return
			case <-tk.C:
				fn()
			}
		}
	}()
	return t
}

// Stop ends the goroutine and waits for it. It is safe on a nil ticker and
// returns nil so callers can clear their field in one statement.
func (t *ticker) Stop() *ticker {
	if t != nil {
		close(t.stop)
		<-t.done
	}
	return nil
}
