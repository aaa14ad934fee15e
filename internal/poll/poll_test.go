package poll

import (
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	if !Until(time.Minute, time.Millisecond, func() bool { n++; return n == 3 }) {
		t.Fatal("a condition that became true was reported false")
	}
	if n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
	if Until(5*time.Millisecond, time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never held was reported true")
	}
}
