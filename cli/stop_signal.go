package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals are the signals that stop a running job.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// onFirstSignal returns a context that ends at the first of sigs. By the time
// it ends, the signals have their default action again, so a second signal,
// sent once the program has reacted to the first, ends the process at once.
// A second signal that arrived before the default action was back is raised
// again. release stops watching (idempotent).
func onFirstSignal(sigs ...os.Signal) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-ch:
		case <-done:
			return
		}
		signal.Stop(ch) // the default action is back for the next one
		select {
		case s := <-ch: // the second came before it was
			if sig, ok := s.(syscall.Signal); ok {
				_ = syscall.Kill(os.Getpid(), sig)
			}
		default:
		}
		cancel()
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			<-finished
			signal.Stop(ch)
			cancel()
		})
	}
}
