// Package flow is what the instances of a rescaled operator measure of
// their records around a live rescale, and the figures a rescale's
// coordinator makes of it (rescale.Result.Flow).
//
// Throughput is the records the rescaled operators' instances handed to the
// operator, counted in Bucket buckets of wall time. The wait of a record
// is from its buffer's delivery to the instance (its channel handed it over)
// until the operator processed it: it includes the wait in the instance's
// input queue and, for a record of a moving group that reached its new owner
// before the group's state, the time it was held; it excludes the time
// upstream and in the channel. Before the rescale the instance does not
// know which groups will move, so it keeps a rolling record of its waits per
// key group (GroupWaits); once the rescale's plan says which groups move,
// the wait before is split by it as the wait during the rescale (from the
// instance's first record under the rescale to its part done) is.
//
// The latency from the source of a record is from its buffer's origin
// (origin.go) until the rescaled operator processed it: it adds to the wait
// the time upstream (in sources' outboxes, in channels, in the operators
// before) that the wait leaves out. A buffer's origin is when its source
// task read the earliest record of the source buffers it was made from (a
// read's start, for all its records), so the figure is, for each record,
// that of the oldest record it shared a buffer with at some hop: never
// below the record's own latency from its read, above it by as much as
// the records it was batched with were older (a buffer's fill time at
// each hop, and the spread between the inputs merged into one buffer).
// Time before the read (a
// source held back by backpressure reads late; a record due earlier, as
// in `node bench rescale`, waited already) and the wire between nodes are
// not counted. Records whose origin is not known (restored channel state;
// those an operator writes outside the processing of an input buffer:
// timers, watermarks, the end of input) are left out of it. It is split
// before/during and moved/unmoved as the wait is, and each split's record
// count says how many records it is of.
package flow

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// Bucket is the width of a throughput bucket.
const Bucket = 100 * time.Millisecond

// BeforeWindow is how far before the rescale the steady throughput and the
// wait before are measured.
const BeforeWindow = 2 * time.Second

// WaitBins is the number of bins of a WaitHist.
const WaitBins = 24

// waitBin0 is the upper bound of a WaitHist's first bin; each next bin's
// is twice the one before, the last is open.
const waitBin0 = 16 * time.Microsecond

// WaitHist counts records by wait, in bins that double in width: bin k
// holds waits below 16 µs·2^k (and at least the bin before's bound).
type WaitHist [WaitBins]uint64

// Add counts n records that waited d.
func (h *WaitHist) Add(d time.Duration, n int) {
	k, bound := 0, waitBin0
	for d >= bound && k < WaitBins-1 {
		k++
		bound *= 2
	}
	h[k] += uint64(n)
}

// Merge adds o's counts to h.
func (h *WaitHist) Merge(o WaitHist) {
	for k := range h {
		h[k] += o[k]
	}
}

// Latency is a set of records' count and wait quantiles (each the upper
// bound of the bin it falls in, so never under the true value by more than
// the bin's width).
func (h *WaitHist) Latency() Latency {
	var n uint64
	for _, c := range h {
		n += c
	}
	return Latency{Records: int64(n), P50Ms: h.quantileMs(n, 0.5), P99Ms: h.quantileMs(n, 0.99)}
}

// quantileMs is the q-quantile of n counted records, in ms (0 with none).
func (h *WaitHist) quantileMs(n uint64, q float64) float64 {
	if n == 0 {
		return 0
	}
	rank := uint64(q * float64(n))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	bound := waitBin0
	for k, c := range h {
		seen += c
		if seen >= rank || k == WaitBins-1 {
			return float64(bound) / float64(time.Millisecond)
		}
		bound *= 2
	}
	return float64(bound) / float64(time.Millisecond)
}

// Task is what one instance of a rescaled operator measured (it rides on
// its rescale.TaskResult).
type Task struct {
	// First is the bucket (Unix time / Bucket) of Records[0]; Records
	// counts the records processed per bucket, up to the bucket the
	// instance finished its part in, which is partial.
	First   int64
	Records []int64
	// Ends says the instance ends with its part (a removed one): it
	// processes no records after it.
	Ends bool
	// Before is the wait of the records processed outside any rescale in
	// the BeforeWindow before the instance's first record under this one;
	// BeforeMoved and BeforeUnmoved those of the GroupWaits before it, by
	// whether their key group moves; Moved and Unmoved those it processed
	// under the rescale, split the same way.
	Before, Moved, Unmoved     WaitHist
	BeforeMoved, BeforeUnmoved WaitHist
	// FromSource is the same five figures of the records' latency from
	// their source (see the package doc), for the records whose buffer's
	// origin is known.
	FromSource Hists
}

// Hists is the five latency histograms of an instance's records: before the
// rescale (all of them, and by whether their key group moves) and during it
// (by the same).
type Hists struct {
	Before, Moved, Unmoved     WaitHist
	BeforeMoved, BeforeUnmoved WaitHist
}

// Merge adds o's counts to h.
func (h *Hists) Merge(o Hists) {
	h.Before.Merge(o.Before)
	h.Moved.Merge(o.Moved)
	h.Unmoved.Merge(o.Unmoved)
	h.BeforeMoved.Merge(o.BeforeMoved)
	h.BeforeUnmoved.Merge(o.BeforeUnmoved)
}

// Flow is the throughput and wait figures of a rescale.
type Flow struct {
	// SteadyPerS is the rescaled operators' records/s over the BeforeWindow
	// before the rescale started (from their first record, if later).
	SteadyPerS float64 `json:"steady_per_s"`
	// LowestPerS is the lowest records/s of a Bucket bucket from the
	// rescale's start to its commit; ZeroBuckets how many of them had no
	// record, of Buckets. The buckets run up to the commit's, but only to
	// the last one every instance that goes on had completed when it
	// finished its part (at least the start's).
	LowestPerS  float64 `json:"lowest_per_s"`
	ZeroBuckets int     `json:"zero_buckets"`
	Buckets     int     `json:"buckets"`
	// Before is the wait of all records before the rescale, BeforeMoved
	// and BeforeUnmoved of those (over GroupWaits' slots) by whether their
	// key group moves; Moved and Unmoved those during it, split the same
	// way.
	Before        Latency `json:"wait_before"`
	BeforeMoved   Latency `json:"wait_before_moved"`
	BeforeUnmoved Latency `json:"wait_before_unmoved"`
	Moved         Latency `json:"wait_moved"`
	Unmoved       Latency `json:"wait_unmoved"`
	// FromSourceBefore and the four after it are the same figures of the
	// records' latency from their source to their processing here (see the
	// package doc): it includes the wait above and the time upstream and in
	// channels.
	FromSourceBefore        Latency `json:"from_source_before"`
	FromSourceBeforeMoved   Latency `json:"from_source_before_moved"`
	FromSourceBeforeUnmoved Latency `json:"from_source_before_unmoved"`
	FromSourceMoved         Latency `json:"from_source_moved"`
	FromSourceUnmoved       Latency `json:"from_source_unmoved"`
}

// Latency is p50 and p99 of a set of records' waits.
type Latency struct {
	Records int64   `json:"records"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
}

// BucketOf is the bucket holding t.
func BucketOf(t time.Time) int64 { return t.UnixNano() / int64(Bucket) }

// Figures sums the instances' flows of a rescale that started at start
// and committed at end (nil: no instance measured any).
func Figures(flows []*Task, start, end time.Time) *Flow {
	sum := map[int64]int64{}
	var before, beforeMoved, beforeUnmoved, moved, unmoved WaitHist
	var src Hists
	lastFull := BucketOf(end)
	s := BucketOf(start)
	from := s // the first bucket with a record, if before the start
	n := 0
	for _, f := range flows {
		if f == nil {
			continue
		}
		n++
		if len(f.Records) > 0 {
			from = min(from, f.First)
		}
		for i, c := range f.Records {
			sum[f.First+int64(i)] += c
		}
		if !f.Ends {
			lastFull = min(lastFull, f.First+int64(len(f.Records))-2)
		}
		before.Merge(f.Before)
		beforeMoved.Merge(f.BeforeMoved)
		beforeUnmoved.Merge(f.BeforeUnmoved)
		moved.Merge(f.Moved)
		unmoved.Merge(f.Unmoved)
		src.Merge(f.FromSource)
	}
	if n == 0 {
		return nil
	}
	rate := func(b int64) float64 { return float64(sum[b]) / Bucket.Seconds() }
	fl := &Flow{Before: before.Latency(), BeforeMoved: beforeMoved.Latency(), BeforeUnmoved: beforeUnmoved.Latency(),
		Moved: moved.Latency(), Unmoved: unmoved.Latency(), LowestPerS: -1,
		FromSourceBefore: src.Before.Latency(), FromSourceBeforeMoved: src.BeforeMoved.Latency(), FromSourceBeforeUnmoved: src.BeforeUnmoved.Latency(),
		FromSourceMoved: src.Moved.Latency(), FromSourceUnmoved: src.Unmoved.Latency()}
	var total int64
	from = max(from, s-int64(BeforeWindow/Bucket))
	for b := from; b < s; b++ {
		total += sum[b]
	}
	if from < s {
		fl.SteadyPerS = float64(total) / (time.Duration(s-from) * Bucket).Seconds()
	}
	for b := s; b <= max(s, lastFull); b++ {
		fl.Buckets++
		if sum[b] == 0 {
			fl.ZeroBuckets++
		}
		if r := rate(b); fl.LowestPerS < 0 || r < fl.LowestPerS {
			fl.LowestPerS = r
		}
	}
	return fl
}

// MarshalZerologObject logs f's figures.
func (f *Flow) MarshalZerologObject(e *zerolog.Event) {
	e.Float64("steady_per_s", f.SteadyPerS).Float64("lowest_per_s", f.LowestPerS).Int("zero_buckets", f.ZeroBuckets).
		Int("buckets", f.Buckets).Object("wait_before", f.Before).Object("wait_before_moved", f.BeforeMoved).
		Object("wait_before_unmoved", f.BeforeUnmoved).Object("wait_moved", f.Moved).Object("wait_unmoved", f.Unmoved).
		Object("from_source_before", f.FromSourceBefore).Object("from_source_before_moved", f.FromSourceBeforeMoved).
		Object("from_source_before_unmoved", f.FromSourceBeforeUnmoved).Object("from_source_moved", f.FromSourceMoved).
		Object("from_source_unmoved", f.FromSourceUnmoved)
}

// MarshalZerologObject logs l's figures.
func (l Latency) MarshalZerologObject(e *zerolog.Event) {
	e.Int64("records", l.Records).Float64("p50_ms", l.P50Ms).Float64("p99_ms", l.P99Ms)
}

// String is f's figures in words.
func (f *Flow) String() string {
	return fmt.Sprintf("throughput %.0f/s before, lowest 100 ms bucket %.0f/s (%d of %d empty); wait p50/p99 before %s (moved groups %s, unmoved %s), during: moved groups %s, unmoved %s; from source p50/p99 before %s (moved groups %s, unmoved %s), during: moved groups %s, unmoved %s",
		f.SteadyPerS, f.LowestPerS, f.ZeroBuckets, f.Buckets, f.Before, f.BeforeMoved, f.BeforeUnmoved, f.Moved, f.Unmoved,
		f.FromSourceBefore, f.FromSourceBeforeMoved, f.FromSourceBeforeUnmoved, f.FromSourceMoved, f.FromSourceUnmoved)
}

// String is "0.016/0.512 ms (1200 records)".
func (l Latency) String() string {
	return fmt.Sprintf("%.3f/%.3f ms (%d records)", l.P50Ms, l.P99Ms, l.Records)
}
