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
// its steady rate over its life. TestFiguresFromSource covers the latency
// from the source.
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

// TestFiguresFromSource: each of the five latency-from-source figures sums
// its own histogram over the instances, apart from the waits: a record
// that waited 1 ms at the instance but was read by its source 70 ms before
// counts 70 ms here.
func TestFiguresFromSource(t *testing.T) {
	start := time.Unix(1000, 0)
	mk := func(d time.Duration, n int) WaitHist {
		var h WaitHist
		h.Add(d, n)
		return h
	}
	a := &Task{First: BucketOf(start), Records: []int64{1, 1},
		Unmoved: mk(time.Millisecond, 10), Moved: mk(time.Millisecond, 4),
		FromSource: Hists{Before: mk(3*time.Millisecond, 20), BeforeMoved: mk(3*time.Millisecond, 5), BeforeUnmoved: mk(3*time.Millisecond, 15),
			Moved: mk(70*time.Millisecond, 4), Unmoved: mk(70*time.Millisecond, 10)}}
	b := &Task{First: BucketOf(start), Records: []int64{1, 1},
		FromSource: Hists{Before: mk(100*time.Microsecond, 20), Moved: mk(200*time.Millisecond, 1), Unmoved: mk(70*time.Millisecond, 30)}}
	f := Figures([]*Task{a, b}, start, start.Add(150*time.Millisecond))
	for _, c := range []struct {
		name     string
		got      Latency
		n        int64
		p50, p99 float64
	}{
		{"before", f.FromSourceBefore, 40, 0.128, 4.096},
		{"before, moved", f.FromSourceBeforeMoved, 5, 4.096, 4.096},
		{"before, unmoved", f.FromSourceBeforeUnmoved, 15, 4.096, 4.096},
		{"moved", f.FromSourceMoved, 5, 131.072, 131.072},
		{"unmoved", f.FromSourceUnmoved, 40, 131.072, 131.072},
		{"wait unmoved", f.Unmoved, 10, 1.024, 1.024},
	} {
		if c.got.Records != c.n || c.got.P50Ms != c.p50 || c.got.P99Ms != c.p99 {
			t.Errorf("%s: %+v, want %d records, p50 %v ms, p99 %v ms", c.name, c.got, c.n, c.p50, c.p99)
		}
	}
}
