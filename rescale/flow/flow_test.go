package flow

import (
	"testing"
	"time"
)

// TestWaitHist: waits land in doubling bins; quantiles are the upper bound
// of the bin the rank falls in; no records, no quantiles.
func TestWaitHist(t *testing.T) {
	var h WaitHist
	if l := h.Latency(); l != (Latency{}) {
		t.Fatalf("empty: %+v", l)
	}
	h.Add(0, 1)                    // bin 0: below 16 µs
	h.Add(15*time.Microsecond, 48) // bin 0
	h.Add(16*time.Microsecond, 1)  // bin 1: 16 µs to 32 µs
	h.Add(3*time.Millisecond, 49)  // bin 8: 2.048 ms to 4.096 ms
	h.Add(time.Hour, 1)            // the last bin, open
	if h[0] != 49 || h[1] != 1 || h[8] != 49 || h[WaitBins-1] != 1 {
		t.Fatalf("bins %v", h)
	}
	l := h.Latency()
	if l.Records != 100 || l.P50Ms != 0.032 || l.P99Ms != 4.096 {
		t.Fatalf("latency %+v, want 100 records, p50 0.032 ms, p99 4.096 ms", l)
	}
	var m WaitHist
	m.Merge(h)
	m.Merge(h)
	if m.Latency().Records != 200 || m.Latency().P50Ms != l.P50Ms {
		t.Fatalf("merged %+v", m.Latency())
	}
}

// TestFigures: the steady rate is over the BeforeWindow before the start;
// the buckets from the start run to the last one every instance that goes
// on completed (a removed instance's end does not cut them short, a
// running one's partial last bucket is left out); an empty bucket counts;
// waits are summed over instances; a job younger than the BeforeWindow has
// its steady rate over its life.
func TestFigures(t *testing.T) {
	start := time.Unix(1000, 0)              // bucket 10000
	end := start.Add(350 * time.Millisecond) // bucket 10003
	s := BucketOf(start)
	var before, moved WaitHist
	before.Add(time.Millisecond, 10)
	moved.Add(8*time.Millisecond, 5)
	steady := make([]int64, 20)
	for i := range steady {
		steady[i] = 100 // 1000/s
	}
	kept := &Task{First: s - 20, Records: append(append([]int64{}, steady...), 50, 0, 80, 7), Before: before, Moved: moved, BeforeMoved: moved, BeforeUnmoved: before}
	removed := &Task{First: s - 20, Records: append(append([]int64{}, steady...), 10), Ends: true, Before: before, BeforeUnmoved: before}
	added := &Task{First: s + 1, Records: []int64{30, 40, 5}, Moved: moved}
	young := &Task{First: s - 5, Records: []int64{100, 100, 100, 100, 100, 50, 7}}
	for _, tc := range []struct {
		name            string
		flows           []*Task
		steady, lowest  float64
		zero, buckets   int
		beforeN, movedN int64
		beforeMovedN    int64
	}{
		// kept: buckets s..s+3, s+3 partial → s..s+2; added ends at s+3
		// partial → s+2; sums 60, 30, 120 (/0.1 s).
		{"all", []*Task{kept, removed, added}, 2000, 300, 0, 3, 20, 10, 5},
		{"kept only", []*Task{kept}, 1000, 0, 1, 3, 10, 5, 5},
		// The added instance alone: no steady rate; its partial bucket
		// s+3 is left out; bucket s had none of its records.
		{"added only", []*Task{added}, 0, 0, 1, 3, 0, 5, 0},
		// A job 0.5 s old at the start: its steady rate is over those
		// 5 buckets, not the whole BeforeWindow.
		{"young job", []*Task{young}, 1000, 500, 0, 1, 0, 0, 0},
		{"nil flows", []*Task{nil}, 0, 0, 0, 0, 0, 0, 0},
	} {
		f := Figures(tc.flows, start, end)
		if tc.name == "nil flows" {
			if f != nil {
				t.Errorf("%s: %+v, want nil", tc.name, f)
			}
			continue
		}
		if f.SteadyPerS != tc.steady || f.LowestPerS != tc.lowest || f.ZeroBuckets != tc.zero || f.Buckets != tc.buckets ||
			f.Before.Records != tc.beforeN || f.Moved.Records != tc.movedN || f.BeforeMoved.Records != tc.beforeMovedN || f.BeforeUnmoved.Records != tc.beforeN {
			t.Errorf("%s: %+v", tc.name, f)
		}
	}
}
