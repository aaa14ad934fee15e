package actors

import (
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/ratelimit"
	"github.com/weirstream/weir/transport"
)

// TestBadInputFloodIsCountedAndRateLimited: a flood of bad messages is
// counted one by one, but logged only a few times per period.
func TestBadInputFloodIsCountedAndRateLimited(t *testing.T) {
	var buf logbuf.Buffer
	counters := &transport.Counters{}
	r := NewRemote("n1", nil, counters, zerolog.New(&buf))
	for i := 0; i < 1000; i++ {
		r.bad("weir.job.data.1.0.0", errors.New("truncated msgpack"))
	}
	if got := counters.Malformed.Load(); got != 1000 {
		t.Fatalf("malformed counted %d, want 1000", got)
	}
	lines := buf.Lines("bad message on the wire")
	if len(lines) != ratelimit.DefaultBurst {
		t.Fatalf("%d warnings logged for 1000 bad messages, want %d:\n%s", len(lines), ratelimit.DefaultBurst, strings.Join(lines, "\n"))
	}
}
