package actors

import (
	"testing"
	"time"

	"github.com/weirstream/weir/internal/leaktest"
)

// TestTickerEndsWhenItsNodeQuits: a node's Shutdown does not stop its
// actors, so an actor's ticker must end with the node, not only on Stop.
func TestTickerEndsWhenItsNodeQuits(t *testing.T) {
	leaktest.Check(t)
	quit := make(chan struct{})
	tk := startTicker(quit, time.Millisecond, func() {})
	close(quit)
	select {
	case <-tk.done:
	case <-time.After(leaktest.Within):
		t.Fatalf("the ticker goroutine still runs %v after its node quit", leaktest.Within)
	}
	if tk.Stop() != nil {
		t.Fatal("Stop after quit did not return nil")
	}
}

// TestUploaderEndsWhenItsNodeQuits: like the tickers, a job's upload workers
// end with their node even if the job's actors never get to stop them.
func TestUploaderEndsWhenItsNodeQuits(t *testing.T) {
	leaktest.Check(t)
	quit := make(chan struct{})
	u := newUploader(quit, 2, 4, time.Minute)
	close(quit)
	ended := make(chan struct{})
	go func() { u.wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(leaktest.Within):
		t.Fatalf("the upload workers still run %v after their node quit", leaktest.Within)
	}
	u.stop()
}
