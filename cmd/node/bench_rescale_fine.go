package main

import "time"

// fineCurve is the throughput at the sinks at a millisecond's resolution:
// the records that reached them per fineStep, and at the end of each step
// the rate over the sliding window before it. A sink receives records in
// buffers (flushed every few ms), so a single millisecond is mostly empty
// or full; the window smooths that, and the noise floor (the same measure
// over undisturbed time of the same run) says what is left of it.
type fineCurve struct {
	window time.Duration
	// prefix[i] counts the records that arrived in the first i steps.
	prefix []int
}

// newFineCurve counts samples per fineStep over [0, end) and rates them
// over window (a multiple of fineStep).
func newFineCurve(samples []latencySample, end, window time.Duration) fineCurve {
	counts := make([]int, int(end/fineStep))
	for _, s := range samples {
		if i := int(time.Duration(s.OutUs) * time.Microsecond / fineStep); i >= 0 && i < len(counts) {
			counts[i]++
		}
	}
	c := fineCurve{window: window, prefix: make([]int, len(counts)+1)}
	for i, n := range counts {
		c.prefix[i+1] = c.prefix[i] + n
	}
	return c
}

// steps is the number of steps the curve covers.
func (c fineCurve) steps() int { return len(c.prefix) - 1 }

// step is the step holding d.
func (c fineCurve) step(d time.Duration) int { return int(d / fineStep) }

// rate is the records/s over the window ending with step i (over the steps
// since 0, for a window reaching before it).
func (c fineCurve) rate(i int) float64 {
	w := int(c.window / fineStep)
	lo := max(0, i+1-w)
	return float64(c.prefix[i+1]-c.prefix[lo]) / (time.Duration(i+1-lo) * fineStep).Seconds()
}

// disruption is the time a rescale held throughput below disruptedBelow of
// steady: the steps whose window rate is below it from the step of start
// until the first step at or above it that ends after end, and before the
// step of limit. Dips before or after that stretch (a checkpoint's, say)
// are not the rescale's. span is the time examined: from start to that
// first step back (or to limit).
func (c fineCurve) disruption(start, end, limit time.Duration, steady float64) (below, span time.Duration) {
	i, stop := c.step(start), min(c.step(limit), c.steps())
	first := i
	for ; i < stop; i++ {
		if c.rate(i) < disruptedBelow*steady {
			below += fineStep
		} else if time.Duration(i+1)*fineStep > end {
			break
		}
	}
	return below, time.Duration(i-first) * fineStep
}

// noise is the same measure over undisturbed time: rescales of the same
// length (end − start) placed one after the other in [from, to) — the
// steady window, before any rescale — and the mean and the worst of their
// disruptions.
func (c fineCurve) noise(from, to, length time.Duration, steady float64) (mean, worst time.Duration) {
	var sum time.Duration
	n := 0
	for at := from; at < to; {
		d, span := c.disruption(at, at+length, to, steady)
		sum += d
		n++
		worst = max(worst, d)
		at += max(span, length, fineStep)
	}
	if n > 0 {
		mean = sum / time.Duration(n)
	}
	return mean, worst
}
