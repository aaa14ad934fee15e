package actors

import (
	"testing"
	"time"
)

// TestRestoreLogSpansOverlappingRestores: tasks restore side by side; the
// span runs from the earliest start to the latest end, whatever order the
// restores are recorded in, while Took adds their times up.
func TestRestoreLogSpansOverlappingRestores(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var l restoreLog
	l.add(TaskRestore{Task: "b", Start: t0.Add(10 * time.Millisecond), Took: 50 * time.Millisecond}) // ends at 60
	l.add(TaskRestore{Task: "a", Start: t0, Took: 40 * time.Millisecond})                            // ends at 40
	l.add(TaskRestore{Task: "c", Start: t0.Add(20 * time.Millisecond), Took: 30 * time.Millisecond}) // ends at 50
	s := l.s
	if s.Restores != 3 || s.Took != 120*time.Millisecond {
		t.Errorf("%d restores, %v summed, want 3 and 120ms", s.Restores, s.Took)
	}
	if !s.First.Equal(t0) || s.Span() != 60*time.Millisecond {
		t.Errorf("first %v (want %v), span %v (want 60ms)", s.First, t0, s.Span())
	}
}

// TestRestoreLogDecodedLater: a restore that decoded its key groups itself
// counts as decoded when it ran; one that left groups encoded counts once
// they are decoded, from its start, in the span and in its history entry.
func TestRestoreLogDecodedLater(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var l restoreLog
	l.add(TaskRestore{Task: "a", Start: t0, Took: 40 * time.Millisecond, Decoded: 40 * time.Millisecond})
	l.add(TaskRestore{Task: "b", Start: t0.Add(10 * time.Millisecond), Took: 20 * time.Millisecond})
	if s := l.s; s.DecodedRestores != 1 || s.DecodedSpan() != 40*time.Millisecond || s.Span() != 40*time.Millisecond {
		t.Fatalf("before b decoded: %d decoded, span %v until decoded, %v until running; want 1, 40ms, 40ms", s.DecodedRestores, s.DecodedSpan(), s.Span())
	}
	l.decoded("b", t0.Add(10*time.Millisecond), 90*time.Millisecond)
	s := l.s
	if s.DecodedRestores != 2 || s.Decoded != 130*time.Millisecond || s.DecodedSpan() != 100*time.Millisecond {
		t.Fatalf("%d decoded, %v summed, span %v; want 2, 130ms, 100ms", s.DecodedRestores, s.Decoded, s.DecodedSpan())
	}
	if h := s.History[1]; h.Task != "b" || h.Decoded != 90*time.Millisecond || h.Took != 20*time.Millisecond {
		t.Fatalf("history of b %+v: want Took 20ms, Decoded 90ms", h)
	}
}
