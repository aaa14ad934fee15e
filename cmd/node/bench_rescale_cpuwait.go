package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// How long the benchmark's own threads waited for a CPU: on a busy machine a
// whole process can be runnable and not run for tens of milliseconds, every
// task at once, which the sinks' throughput shows as a stall of the stream.
// The kernel counts it per thread (run delay, in /proc/self/task/*/schedstat
// on Linux); the benchmark samples the sum over its threads, so a rescale's
// disruption can be read next to the time the machine kept the process from
// running meanwhile.

// cpuWaitEvery is the sampling interval.
const cpuWaitEvery = 10 * time.Millisecond

// runDelayOf parses a schedstat line (time on a CPU, time runnable but
// waiting for one, timeslices; ns) and returns the wait.
func runDelayOf(line []byte) (time.Duration, error) {
	f := bytes.Fields(line)
	if len(f) < 2 {
		return 0, fmt.Errorf("schedstat %q: want 3 fields", line)
	}
	ns, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || ns < 0 {
		return 0, fmt.Errorf("schedstat %q: run delay %q", line, f[1])
	}
	return time.Duration(ns), nil
}

// processRunDelay sums the run delay of the process's threads; ok is false
// where the kernel does not tell it.
func processRunDelay() (d time.Duration, ok bool) {
	paths, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(paths) == 0 {
		return 0, false
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended
		}
		t, err := runDelayOf(b)
		if err != nil {
			return 0, false
		}
		d += t
	}
	return d, true
}

// cpuWaitSample is the process's run delay so far, at a moment.
type cpuWaitSample struct {
	at    time.Time
	total time.Duration
}

// cpuWaits samples the process's run delay from start until stop.
type cpuWaits struct {
	mu      sync.Mutex
	samples []cpuWaitSample
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// startCPUWaits starts sampling; it samples nothing where the kernel does
// not count run delay.
func startCPUWaits() *cpuWaits {
	w := &cpuWaits{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(cpuWaitEvery)
		defer t.Stop()
		for {
			d, ok := processRunDelay()
			if !ok {
				return
			}
			w.mu.Lock()
			w.samples = append(w.samples, cpuWaitSample{at: time.Now(), total: d})
			w.mu.Unlock()
			select {
			case <-t.C:
			case <-w.quit:
				return
			}
		}
	}()
	return w
}

// stop ends the sampling and waits for it; idempotent.
func (w *cpuWaits) stop() {
	w.once.Do(func() { close(w.quit) })
	<-w.done
}

// between is the run delay the process gathered from from to to, in time
// since base: the difference of the last samples at or before each (a
// thread that ended takes its count along: never below 0). ok is false
// without samples around both.
func (w *cpuWaits) between(base time.Time, from, to time.Duration) (d time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := func(t time.Duration) (time.Duration, bool) {
		var v time.Duration
		found := false
		for _, s := range w.samples {
			if s.at.Sub(base) > t {
				break
			}
			v, found = s.total, true
		}
		return v, found
	}
	a, okA := at(from)
	b, okB := at(to)
	if !okA || !okB || len(w.samples) == 0 || w.samples[len(w.samples)-1].at.Sub(base) < to {
		return 0, false
	}
	return max(b-a, 0), true
}

// addCPUWaits adds to c the process's wait for a CPU in the steady window
// and over each rescale's examined time (base: the pacer's start).
func addCPUWaits(c *rescaleCaseResult, cfg rescaleBenchConfig, samples []latencySample, w *cpuWaits, base time.Time) {
	if d, ok := w.between(base, cfg.Warmup, cfg.firstRescale()); ok {
		v := ms(d) / cfg.Steady.Seconds()
		c.CPUWaitMsPerS = &v
	}
	fine := newFineCurve(samples, cfg.end(), cfg.Window)
	for i := range c.Steps {
		s := &c.Steps[i]
		m := s.moment
		next := cfg.end()
		if i+1 < len(c.Steps) {
			next = c.Steps[i+1].moment.Request
		}
		_, span := fine.disruption(m.Start, m.End, next, c.SteadyPerS)
		if d, ok := w.between(base, m.Start, m.Start+max(span, m.End-m.Start)); ok {
			v := ms(d)
			s.CPUWaitMs = &v
		}
	}
}
