package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/cputime"
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
// the records the task processed, the time spent in each part, and the CPU
// time this process and the whole machine used in it.
type onSplit struct {
	records [splitParts]int64
	time    [splitParts]time.Duration
	cpu     [splitParts]time.Duration // this process's
	machine [splitParts]time.Duration // every core's busy time, the kernel's write-back too
}

// add counts records processed over d in part p.
func (s *onSplit) add(p splitPart, records int64, d time.Duration) {
	s.records[p] += records
	s.time[p] += d
}

// addCPU counts CPU time used in part p: by this process and by the whole
// machine.
func (s *onSplit) addCPU(p splitPart, process, machine time.Duration) {
	s.cpu[p] += process
	s.machine[p] += machine
}

// cores is how many cores were busy on average in part p: with this
// process's work and with anything's; 0 without time in it.
func (s onSplit) cores(p splitPart) (process, machine float64) {
	if s.time[p] <= 0 {
		return 0, 0
	}
	return s.cpu[p].Seconds() / s.time[p].Seconds(), s.machine[p].Seconds() / s.time[p].Seconds()
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
	c0, _ := cputime.Machine()
	p0 := cputime.Now()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(splitEvery)
		defer tick.Stop()
		sample := func() {
			n1, t1 := sh.processed.Load(), time.Now()
			c1, ok := cputime.Machine()
			if !ok {
				c1 = c0 // no busy time to read: none counted, rather than a negative one
			}
			p1 := cputime.Now()
			if p, ok := partOf(sh.phase.Load(), m.SnapshotsEncoding.Load(), m.BlobsStoring.Load()); ok {
				s.out.add(p, n1-n0, t1.Sub(t0))
				s.out.addCPU(p, p1-p0, c1-c0)
			}
			n0, t0, c0, p0 = n1, t1, c1, p1
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

// coresProgress is the progress line's account of the cores busy in each
// part of a run's held and on phases, this process's and the machine's: a
// paced run whose machine is near all its cores in a part is one where the
// job waits for a core there, and its latency grows; empty without
// samples.
func coresProgress(run string, s onSplit) string {
	if s.time[partHeld] <= 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; %s, cores busy (process/machine):", run)
	for p, name := range []string{"held", "encoding", "storing", "other"} {
		proc, mach := s.cores(splitPart(p))
		fmt.Fprintf(&b, " %s %.2f/%.2f", name, proc, mach)
	}
	return b.String()
}

// coresOfRuns is the cores busy in each part of the held and on phases of
// a row's throughput run (fast) and of its latency run (paced).
type coresOfRuns struct {
	Fast  *partsCores `json:"fast,omitempty"`
	Paced *partsCores `json:"paced,omitempty"`
}

// partsCores is the cores busy in each part of a run's held and on phases.
type partsCores struct {
	Held     coresBusy `json:"held"`
	Encoding coresBusy `json:"encoding"`
	Storing  coresBusy `json:"storing"`
	Other    coresBusy `json:"other"`
}

// coresBusy is how many cores were busy on average: with this process's
// work, and with anything's on the machine.
type coresBusy struct {
	Process float64 `json:"process"`
	Machine float64 `json:"machine"`
}

// parts lists c's figures in the order of splitPart.
func (c *partsCores) parts() [splitParts]*coresBusy {
	return [splitParts]*coresBusy{&c.Held, &c.Encoding, &c.Storing, &c.Other}
}

// coresOf is the cores busy in each part of a run's split; nil without
// held phases.
func coresOf(s onSplit) *partsCores {
	if s.time[partHeld] <= 0 {
		return nil
	}
	c := new(partsCores)
	for p, b := range c.parts() {
		b.Process, b.Machine = s.cores(splitPart(p))
	}
	return c
}

// fillCores sets the row's cores busy from its runs' splits; nil without
// held phases in either.
func (r *stateBenchRow) fillCores(fast, paced onSplit) {
	c := coresOfRuns{Fast: coresOf(fast), Paced: coresOf(paced)}
	if c.Fast != nil || c.Paced != nil {
		r.CoresBusy = &c
	}
}

// mergeCores is the median of each figure over the rows that have it,
// run by run; nil when none has.
func mergeCores(rows []stateBenchRow) *coresOfRuns {
	var fast, paced []*partsCores
	for _, r := range rows {
		if c := r.CoresBusy; c != nil {
			if c.Fast != nil {
				fast = append(fast, c.Fast)
			}
			if c.Paced != nil {
				paced = append(paced, c.Paced)
			}
		}
	}
	out := coresOfRuns{Fast: medianParts(fast), Paced: medianParts(paced)}
	if out.Fast == nil && out.Paced == nil {
		return nil
	}
	return &out
}

// medianParts is the median of each figure of cs; nil without any.
func medianParts(cs []*partsCores) *partsCores {
	if len(cs) == 0 {
		return nil
	}
	m := new(partsCores)
	for p, b := range m.parts() {
		proc, mach := make([]float64, len(cs)), make([]float64, len(cs))
		for j, c := range cs {
			proc[j], mach[j] = c.parts()[p].Process, c.parts()[p].Machine
		}
		b.Process, b.Machine = median(proc), median(mach)
	}
	return m
}
