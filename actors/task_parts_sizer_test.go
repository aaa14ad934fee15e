package actors

import (
	"testing"
	"time"
)

// TestPartSizer scripts the sizer: it starts at one record, grows at most
// twice per call while calls are short, follows a slow operator down at once,
// and never hands out more than is left.
func TestPartSizer(t *testing.T) {
	type step struct {
		remaining int           // records left in the buffer
		want      int           // size() must return this
		took      time.Duration // the call of want records took this
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"fast operator grows to whole buffers", []step{
			{512, 1, time.Microsecond}, {511, 2, time.Microsecond}, {509, 4, time.Microsecond},
			{505, 8, time.Microsecond}, {497, 16, time.Microsecond}, {481, 32, time.Microsecond},
			{449, 64, time.Microsecond}, {385, 128, 2 * time.Microsecond}, {257, 256, 5 * time.Microsecond},
			{1, 1, 0}, {512, 512, 10 * time.Microsecond}, {512, 512, 10 * time.Microsecond},
		}},
		{"slow records: one per call", []step{
			{512, 1, 50 * time.Millisecond}, {511, 1, 50 * time.Millisecond}, {510, 1, 50 * time.Millisecond},
		}},
		{"cost rises: size follows down at once", []step{
			{512, 1, 0}, {511, 2, 0}, {509, 4, 0}, {505, 8, 0}, {497, 16, 0}, {481, 32, 0},
			{449, 64, 0}, {385, 128, 0}, {257, 256, 0}, {512, 512, 0},
			{512, 512, 16 * time.Millisecond}, // 31 µs a record: 32 per millisecond
			{512, 32, time.Millisecond},       // steady
			{480, 32, 100 * time.Microsecond}, // cheaper again: at most twice
			{448, 64, 100 * time.Microsecond},
		}},
		{"a call that takes no time doubles", []step{{10, 1, 0}, {9, 2, time.Hour}, {7, 1, 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s partSizer
			for i, st := range tc.steps {
				if got := s.size(st.remaining); got != st.want {
					t.Fatalf("step %d: size(%d) = %d, want %d", i, st.remaining, got, st.want)
				}
				s.observe(st.want, st.took)
			}
		})
	}
	var s partSizer
	s.observe(0, time.Hour)
	if got := s.size(100); got != 1 {
		t.Fatalf("after observing no records size = %d, want 1", got)
	}
	s.observe(1, 0)
	for range 64 {
		s.observe(s.size(1<<30), 0)
	}
	if got := s.size(1 << 30); got != maxPart {
		t.Fatalf("an operator that takes no time grows to %d, want maxPart %d", got, maxPart)
	}
}
