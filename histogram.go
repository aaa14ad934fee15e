package weir

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// histBuckets covers 1 µs … ~1 h in 1/8-octave steps.
const histSub = 8

// Histogram records durations in logarithmic buckets (about 9 % resolution); it is
// safe for concurrent use and cheap enough to call per record. It stays
// hand-written rather than a Prometheus histogram: it is observed per record
// on the hot path (two atomic adds, no bucket search) and answers the
// run summary's quantiles (p50, p99) over 1 µs … 1 h at that resolution,
// which fixed Prometheus buckets do not.
type Histogram struct {
	counts [64 * histSub]atomic.Int64
	total  atomic.Int64
	max    atomic.Int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{} }

func bucketOf(us uint64) int {
	if us < histSub {
		return int(us)
	}
	e := 63 - bits.LeadingZeros64(us) // us in [2^e, 2^(e+1))
	sub := int((us >> (uint(e) - 3)) & (histSub - 1))
	return (e-2)*histSub + sub
}

func bucketLow(b int) float64 {
	if b < histSub {
		return float64(b)
	}
	e := b/histSub + 2
	sub := b % histSub
	return math.Ldexp(1+float64(sub)/histSub, e)
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	us := d.Microseconds()
	if us < 0 {
		us = 0
	}
	b := bucketOf(uint64(us))
	if b >= len(h.counts) {
		b = len(h.counts) - 1
	}
	h.counts[b].Add(1)
	h.total.Add(1)
	for {
		cur := h.max.Load()
		if us <= cur || h.max.CompareAndSwap(cur, us) {
			break
		}
	}
}

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.total.Load() }

// Quantile returns the q-quantile (0 < q ≤ 1), or 0 with no observations.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.total.Load()
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for b := range h.counts {
		seen += h.counts[b].Load()
		if seen >= rank {
			v := bucketLow(b)
			if m := float64(h.max.Load()); v > m {
				v = m
			}
			return time.Duration(v * float64(time.Microsecond))
		}
	}
	return time.Duration(h.max.Load()) * time.Microsecond
}
