package transport

import (
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll.Until(5*time.Second, poll.Every, cond) {
		t.Fatalf("timed out after 5s waiting for %s", what)
	}
}
