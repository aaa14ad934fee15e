package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/weirstream/weir/actors"
)

// splitPart is what a sample of the held and on phases fell in.
type splitPart int

// The parts of onSplit: the held phases, and the on phases while a task
// encoded a snapshot (and, streaming, wrote it), while a checkpoint's blob
// was still being stored once encoded (its fsync), and otherwise.
const (
	partHeld splitPart = iota
	partEncoding
	partStoring
	partOther
	splitParts
)

// splitEvery is how often splitSampler reads the job's counters: a part's
// time is known to about this much per change of part.
const splitEvery = 2 * time.Millisecond

// partOf is the part of a sample taken in phase with encoding snapshots
// being encoded and storing blobs being stored; false outside the held and
// on phases.
func partOf(phase int32, encoding, storing int64) (splitPart, bool) {
	switch {
	case phase == phaseHeld:
		return partHeld, true
	case phase != phaseOn:
		return 0, false
	case encoding > 0:
		return partEncoding, true
	case storing > 0:
		return partStoring, true
	}
	return partOther, true
}

// onSplit is where the on phases of a run went, sampled every splitEvery:
// the records the task processed and the time spent in each part.
type onSplit struct {
	records [splitParts]int64
	time    [splitParts]time.Duration
}

// add counts records processed over d in part p.
func (s *onSplit) add(p splitPart, records int64, d time.Duration) {
	s.records[p] += records
	s.time[p] += d
}

// vsHeld is part p's throughput against the held phases', in %; 0 when
// either has no time or the held phases no records.
func (s onSplit) vsHeld(p splitPart) float64 {
	if s.time[p] <= 0 || s.time[partHeld] <= 0 || s.records[partHeld] == 0 {
		return 0
	}
	rate := func(q splitPart) float64 { return float64(s.records[q]) / s.time[q].Seconds() }
	return 100 * rate(p) / rate(partHeld)
}

// shareOfOn is part p's share of the on phases' time, in %; 0 without any.
func (s onSplit) shareOfOn(p splitPart) float64 {
	var on time.Duration
	for q := partEncoding; q < splitParts; q++ {
		on += s.time[q]
	}
	if on <= 0 {
		return 0
	}
	return 100 * float64(s.time[p]) / float64(on)
}

// splitSampler samples a run's held and on phases into an onSplit on a
// goroutine of its own until stop.
type splitSampler struct {
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	out  onSplit
}

// startSplit starts sampling the task's progress in sh and the job's
// storing gauges in m; stop takes a last sample.
func startSplit(sh *stateShared, m *actors.Metrics) *splitSampler {
	s := &splitSampler{quit: make(chan struct{})}
	n0, t0 := sh.processed.Load(), time.Now()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(splitEvery)
		defer tick.Stop()
		sample := func() {
			n1, t1 := sh.processed.Load(), time.Now()
			if p, ok := partOf(sh.phase.Load(), m.SnapshotsEncoding.Load(), m.BlobsStoring.Load()); ok {
				s.out.add(p, n1-n0, t1.Sub(t0))
			}
			n0, t0 = n1, t1
		}
		for {
			select {
			case <-s.quit:
				sample()
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return s
}

// stop ends the sampling, if it has not yet, and returns what it found.
func (s *splitSampler) stop() onSplit {
	s.once.Do(func() { close(s.quit) })
	s.wg.Wait()
	return s.out
}

// fillSplit sets the row's figures of where its on phases went.
func (r *stateBenchRow) fillSplit(s onSplit) {
	r.EncodingSharePct, r.EncodingVsHeldPct = s.shareOfOn(partEncoding), s.vsHeld(partEncoding)
	r.StoringSharePct, r.StoringVsHeldPct = s.shareOfOn(partStoring), s.vsHeld(partStoring)
	r.OtherVsHeldPct = s.vsHeld(partOther)
}

// splitProgress is the progress line's account of where the on phases
// went; empty when they took no time.
func splitProgress(s onSplit) string {
	if s.shareOfOn(partEncoding)+s.shareOfOn(partStoring)+s.shareOfOn(partOther) == 0 {
		return ""
	}
	return fmt.Sprintf("; on phases: encoding %.1f %% of the time at %.1f %% of held, storing %.1f %% at %.1f %%, other %.1f %% at %.1f %%",
		s.shareOfOn(partEncoding), s.vsHeld(partEncoding), s.shareOfOn(partStoring), s.vsHeld(partStoring), s.shareOfOn(partOther), s.vsHeld(partOther))
}
