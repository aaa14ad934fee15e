package transport

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/poll"
)

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll.Until(30*time.Second, poll.Every, cond) {
		t.Fatalf("timed out after 30s waiting for %s", what)
	}
}

// flushSubscription returns once the server has the subscriptions nc made
// so far: other connections publish only after that, or their messages may
// reach the server before the subscription does and go to no one.
func flushSubscription(t *testing.T, nc *nats.Conn) {
	t.Helper()
	if err := nc.Flush(); err != nil {
		t.Fatalf("flush the subscription: %v", err)
	}
}
