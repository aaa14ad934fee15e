package actors

import (
	"testing"
	"time"
)

// TestPartSizer scripts the sizer against operators with known costs: it
// starts at one record, tries two, grows at most twice per call while calls
// are short, follows a slow operator down at once, does not cut an operator
// whose calls have a large fixed cost into one-record calls, and never hands
// out more than is left.
func TestPartSizer(t *testing.T) {
	type step struct {
		remaining int           // records left in the buffer
		want      int           // size() must return this
		took      time.Duration // the call of want records took this
	}
	const us, ms = time.Microsecond, time.Millisecond
	cases := []struct {
		name  string
		steps []step
	}{
		{"fast operator grows to whole buffers", []step{
			{512, 1, 50}, {511, 2, 100}, {509, 4, 200}, {505, 8, 400}, {497, 16, 800},
			{481, 32, 2 * us}, {449, 64, 3 * us}, {385, 128, 6 * us}, {257, 256, 12 * us},
			{1, 1, 50}, {512, 512, 25 * us}, {512, 512, 25 * us},
		}},
		{"50 ms a record: one record per call after one call of two", []step{
			{512, 1, 50 * ms}, {511, 2, 100 * ms}, {509, 1, 50 * ms}, {508, 1, 50 * ms}, {507, 1, 50 * ms},
		}},
		{"cost rises: size follows down at once", []step{
			{512, 1, 0}, {511, 2, 0}, {509, 4, 0}, {505, 8, 0}, {497, 16, 0}, {481, 32, 0},
			{449, 64, 0}, {385, 128, 0}, {257, 256, 0}, {512, 512, 0},
			{512, 512, 16 * ms},  // from 256 in no time to 512 in 16 ms: 62.5 µs a record
			{512, 16, 500 * us},  // with 512 in 16 ms: 31.25 µs a record
			{496, 32, ms},        // steady
			{464, 32, ms},        //
			{432, 32, 100 * us},  // cheaper again: the size grows at most twice
			{400, 64, 200 * us},  //
			{336, 128, 400 * us}, //
		}},
		{"5 ms a call whatever its size: grows to whole buffers", []step{
			{512, 1, 5 * ms}, {511, 2, 5 * ms}, {509, 4, 5 * ms}, {505, 8, 5 * ms}, {497, 16, 5 * ms},
			{481, 32, 5 * ms}, {449, 64, 5 * ms}, {385, 128, 5 * ms}, {257, 256, 5 * ms},
			{1, 1, 5 * ms}, {512, 512, 5*ms + 512*us}, {512, 512, 5*ms + 512*us},
		}},
		{"2 ms a call plus 1 ms a record: a record at a time", []step{
			{512, 1, 3 * ms}, {511, 2, 4 * ms}, {509, 2, 4 * ms}, {507, 2, 4 * ms},
		}},
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
	for range 64 {
		s.observe(s.size(1<<30), 0)
	}
	if got := s.size(1 << 30); got != maxPart {
		t.Fatalf("an operator that takes no time grows to %d, want maxPart %d", got, maxPart)
	}
}
