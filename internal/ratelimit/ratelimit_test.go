package ratelimit

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestLimiter scripts events of two keys in logical time and checks each
// verdict and the suppressed count handed back.
func TestLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		key        string
		ms         int
		ok         bool
		suppressed int
	}
	for _, c := range []struct {
		name   string
		period time.Duration
		burst  int
		steps  []step
	}{
		{"burst then suppressed then reported in the next period", time.Second, 2, []step{
			{"a", 0, true, 0}, {"a", 10, true, 0}, {"a", 20, false, 0}, {"a", 999, false, 0},
			{"a", 1000, true, 2}, {"a", 1001, true, 0}, {"a", 1002, false, 0}, {"a", 5000, true, 1},
		}},
		{"keys are independent", time.Second, 1, []step{
			{"a", 0, true, 0}, {"b", 1, true, 0}, {"a", 2, false, 0}, {"b", 3, false, 0}, {"b", 4, false, 0},
			{"a", 1000, true, 1}, {"b", 1003, true, 2},
		}},
		{"the period starts at the first event let through", time.Second, 1, []step{
			{"a", 500, true, 0}, {"a", 1200, false, 0}, {"a", 1500, true, 1},
		}},
		{"time going backwards stays in the period", time.Second, 1, []step{
			{"a", 1000, true, 0}, {"a", 0, false, 0}, {"a", 2000, true, 1},
		}},
		{"zero limiter lets everything through", 0, 0, []step{
			{"a", 0, true, 0}, {"a", 0, true, 0}, {"a", 0, true, 0},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := New(c.period, c.burst)
			for i, s := range c.steps {
				ok, n := l.Allow(s.key, at(s.ms))
				if ok != s.ok || n != s.suppressed {
					t.Fatalf("step %d (%s at %d ms): Allow = %v, %d; want %v, %d", i, s.key, s.ms, ok, n, s.ok, s.suppressed)
				}
			}
		})
	}
}

func TestPending(t *testing.T) {
	l := New(time.Second, 1)
	now := time.Unix(0, 0)
	l.Allow("a", now)
	l.Allow("a", now)
	l.Allow("a", now)
	if p := l.Pending("a"); p != 2 {
		t.Fatalf("pending %d, want 2", p)
	}
	if p := l.Pending("b"); p != 0 {
		t.Fatalf("pending of an unseen key %d, want 0", p)
	}
}

// TestLogSuppressesAndCounts: of a flood of one warning, Burst lines go out
// in a period and the first line of the next says how many were left out.
func TestLogSuppressesAndCounts(t *testing.T) {
	var buf strings.Builder
	log := zerolog.New(&buf)
	var l Log
	t0 := time.Unix(0, 0)
	for i := 0; i < 100; i++ {
		l.Event(log.Warn(), "bad", t0.Add(time.Duration(i)*time.Millisecond)).Int("i", i).Msg("bad message")
	}
	l.Event(log.Warn(), "bad", t0.Add(DefaultPeriod)).Int("i", 100).Msg("bad message")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != DefaultBurst+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), DefaultBurst+1, buf.String())
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `"suppressed":95`) || !strings.Contains(last, `"i":100`) {
		t.Fatalf("last line %s: want suppressed 95", last)
	}
}
