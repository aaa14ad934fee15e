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
