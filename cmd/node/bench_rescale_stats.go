package main

import (
	"time"

	"github.com/weirstream/weir"
)

// The rescale benchmark's figures, computed from the sinks' samples after a
// case ran: pure functions of the samples and the moments of the rescales.

// rescaleBucket is the width of one throughput bucket (the plot's, and
// the one a live rescale must never leave empty).
const rescaleBucket = 100 * time.Millisecond

// fineStep is the resolution of the disruption measure: records are
// counted per millisecond at the sinks.
const fineStep = time.Millisecond

// duringTail extends a rescale's latency window past its end: records due
// just before the end may reach the sinks after it.
const duringTail = 500 * time.Millisecond

// disruptedBelow is the share of the steady throughput under which a
// bucket counts as disrupted.
const disruptedBelow = 0.5

// rescaleMoment is one rescale of a case, in time since the case's start:
// requested at Request, started at Start (a live rescale first waits for a
// running checkpoint to complete; the stop starts at once), done at End
// (the live rescale committed; the restored job's first record reached a
// sink).
type rescaleMoment struct {
	Request, Start, End time.Duration
	// Moved are the key groups that change owner.
	Moved map[int]bool
}

// latencyFigure is p50 and p99 of the latency of a set of records, in ms.
type latencyFigure struct {
	Records int     `json:"records"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
}

// latencyOf computes p50 and p99 over latencies in ms.
func latencyOf(ms []float64) latencyFigure {
	return latencyFigure{Records: len(ms), P50Ms: weir.Quantile(ms, 0.5), P99Ms: weir.Quantile(ms, 0.99)}
}

// keyLatency is the latency of moved and of unmoved keys' records in a
// window.
type keyLatency struct {
	Moved   latencyFigure `json:"moved"`
	Unmoved latencyFigure `json:"unmoved"`
}

// latencyIn is the latency of the records due in [from, to), split by
// whether their key group is in moved.
func latencyIn(samples []latencySample, from, to time.Duration, moved map[int]bool) keyLatency {
	lo, hi := int32(from/time.Microsecond), int32(to/time.Microsecond)
	var m, u []float64
	for _, s := range samples {
		if s.DueUs < lo || s.DueUs >= hi {
			continue
		}
		ms := float64(s.OutUs-s.DueUs) / 1000
		if moved[int(s.Group)] {
			m = append(m, ms)
		} else {
			u = append(u, ms)
		}
	}
	return keyLatency{Moved: latencyOf(m), Unmoved: latencyOf(u)}
}

// timeline counts the records that reached the sinks in buckets of width
// from the case's start.
type timeline struct {
	width  time.Duration
	counts []int
}

// newTimeline counts samples in buckets of width over [0, end).
func newTimeline(samples []latencySample, end, width time.Duration) timeline {
	t := timeline{width: width, counts: make([]int, int(end/width))}
	for _, s := range samples {
		if i := t.index(time.Duration(s.OutUs) * time.Microsecond); i >= 0 && i < len(t.counts) {
			t.counts[i]++
		}
	}
	return t
}

// index is the bucket holding time d.
func (t timeline) index(d time.Duration) int { return int(d / t.width) }

// rate is bucket i's records/s.
func (t timeline) rate(i int) float64 { return float64(t.counts[i]) / t.width.Seconds() }

// perSecond is every bucket's records/s.
func (t timeline) perSecond() []float64 {
	out := make([]float64, len(t.counts))
	for i := range t.counts {
		out[i] = t.rate(i)
	}
	return out
}

// mean is the records/s over the buckets in [from, to).
func (t timeline) mean(from, to time.Duration) float64 {
	lo, hi := min(t.index(from), len(t.counts)), min(t.index(to), len(t.counts))
	if hi <= lo {
		return 0
	}
	n := 0
	for _, c := range t.counts[lo:hi] {
		n += c
	}
	return float64(n) / (time.Duration(hi-lo) * t.width).Seconds()
}

// zeroBuckets counts the buckets overlapping [from, to] in which no record
// reached a sink, and returns the lowest records/s among them.
func (t timeline) zeroBuckets(from, to time.Duration) (zero int, lowest float64) {
	lowest = -1
	for i := t.index(from); i <= t.index(to) && i < len(t.counts); i++ {
		if t.counts[i] == 0 {
			zero++
		}
		if r := t.rate(i); lowest < 0 || r < lowest {
			lowest = r
		}
	}
	return zero, max(lowest, 0)
}

// firstOut is when the first record delivered by run reached a sink, and
// whether one did.
func firstOut(samples []latencySample, run int) (time.Duration, bool) {
	first, ok := int32(0), false
	for _, s := range samples {
		if int(s.Run) == run && (!ok || s.OutUs < first) {
			first, ok = s.OutUs, true
		}
	}
	return time.Duration(first) * time.Microsecond, ok
}
