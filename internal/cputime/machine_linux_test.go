package cputime

import (
	"testing"
	"time"
)

// TestMachineGoesUp: where /proc/stat exists, the busy time never goes
// down, and spinning a core for a while shows in it.
func TestMachineGoesUp(t *testing.T) {
	t.Parallel()
	b0, ok := Machine()
	if !ok {
		t.Fatal("no busy time from /proc/stat")
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	b1, _ := Machine()
	if b1 < b0+clockTick {
		t.Errorf("busy went from %v to %v over 100 ms of spinning, want at least one tick more", b0, b1)
	}
}
