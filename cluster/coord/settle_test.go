package coord

import (
	"testing"
	"time"
)

// TestSettleLeft counts the settle period from when the node began to
// listen, not from its boot, and is 0 once it has passed.
func TestSettleLeft(t *testing.T) {
	boot := time.Unix(1_800_000_000, 0)
	c := New(Config{Self: "a", Boot: boot, HeartbeatTimeout: 3 * time.Second})
	if got := c.SettleLeft(boot.Add(time.Second)); got != 2*time.Second {
		t.Fatalf("1 s after boot: %v left, want 2s", got)
	}
	c.Listening(boot.Add(2 * time.Second))
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{{2 * time.Second, 3 * time.Second}, {4500 * time.Millisecond, 500 * time.Millisecond}, {5 * time.Second, 0}, {time.Minute, 0}} {
		if got := c.SettleLeft(boot.Add(tc.at)); got != tc.want {
			t.Fatalf("%v after boot, listening from 2 s: %v left, want %v", tc.at, got, tc.want)
		}
	}
}
