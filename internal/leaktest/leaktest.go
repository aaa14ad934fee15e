// Package leaktest checks that a test leaves no goroutine behind: every
// goroutine that started while the test ran must have ended once its
// cleanups have run.
package leaktest

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirstream/weir/internal/poll"
)

// Within bounds how long Check waits for the test's goroutines to end after
// its cleanups: a goroutine still winding down on a busy machine is not a leak.
const Within = 10 * time.Second

// every is the interval between two looks at the goroutines.
const every = 20 * time.Millisecond

// Check records the goroutines running now and registers a cleanup that
// fails t, listing their stacks, if any goroutine started after this call
// is still running Within after t's other cleanups. Call it first in a test
// (or first in the helper that starts what the test uses): cleanups run
// last-registered first, so only the cleanups registered after it run
// before the check.
func Check(t testing.TB) {
	t.Helper()
	CheckWithin(t, Within)
}

// CheckWithin is Check waiting at most within for the goroutines to end.
func CheckWithin(t testing.TB, within time.Duration) {
	before := ignoreNow()
	t.Cleanup(func() {
		if err := wait(within, before...); err != nil {
			t.Errorf("goroutines started during %s outlived it (waited %v): %v", t.Name(), within, err)
		}
	})
}

// wait polls until no goroutine is left but those opts ignore, or within
// passes; it returns the last finding.
func wait(within time.Duration, opts ...goleak.Option) error {
	var err error
	poll.Until(within, every, func() bool {
		err = goleak.Find(opts...)
		return err == nil
	})
	return err
}

// knownUpstream ignores goroutines that a dependency leaks and weir cannot
// end. nats.go v1.55.0's ObjectStore.Put publishes through a JetStream
// context of its own, whose first async publish starts
// resetPendingAcksOnReconnect; Put's deferred cleanup sets the status channel
// that goroutine is about to read to nil when the Put ends first, and the
// goroutine then blocks on a nil channel for ever (one per such Put).
var knownUpstream = goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect")

// ignoreNow ignores the goroutines running now and the known upstream leaks.
func ignoreNow() []goleak.Option { return []goleak.Option{goleak.IgnoreCurrent(), knownUpstream} }
