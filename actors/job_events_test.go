package actors

import (
	"sync"
	"testing"
)

// TestEventLogStaysInTimeOrder: events added from many goroutines at once
// come out oldest first, with strictly ordered or equal times, however the
// writers interleave.
func TestEventLogStaysInTimeOrder(t *testing.T) {
	t.Parallel()
	var l eventLog
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				l.note(EventRestore, string(rune('a'+w)), "")
			}
		}()
	}
	wg.Wait()
	if len(l.events) != maxJobEvents {
		t.Fatalf("%d events kept, want the last %d", len(l.events), maxJobEvents)
	}
	for i := 1; i < len(l.events); i++ {
		if l.events[i].At.Before(l.events[i-1].At) {
			t.Fatalf("event %d at %v before event %d at %v", i, l.events[i].At, i-1, l.events[i-1].At)
		}
	}
}
