package main

import (
	"runtime"
	"testing"
	"time"
)

func TestRunDelayOfSchedstat(t *testing.T) {
	for _, c := range []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"7413259 100101615 9\n", 100101615, true},
		{"0 0 0", 0, true},
		{"7413259", 0, false},
		{"1 x 3", 0, false},
		{"1 -5 3", 0, false},
		{"", 0, false},
	} {
		got, err := runDelayOf([]byte(c.line))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %v, %v; want %v (ok %v)", c.line, got, err, c.want, c.ok)
		}
	}
}

// TestCPUWaitsBetween: the wait between two moments is the difference of
// the last samples at or before each, never below zero, and unknown past
// the last sample.
func TestCPUWaitsBetween(t *testing.T) {
	base := time.Unix(1000, 0)
	w := &cpuWaits{samples: []cpuWaitSample{
		{base.Add(0), 5 * time.Millisecond},
		{base.Add(10 * time.Millisecond), 8 * time.Millisecond},
		{base.Add(20 * time.Millisecond), 40 * time.Millisecond},
		{base.Add(30 * time.Millisecond), 30 * time.Millisecond}, // a thread ended
		{base.Add(40 * time.Millisecond), 31 * time.Millisecond},
	}}
	for _, c := range []struct {
		from, to time.Duration
		want     time.Duration
		ok       bool
	}{
		{0, 20 * time.Millisecond, 35 * time.Millisecond, true},
		{5 * time.Millisecond, 25 * time.Millisecond, 40*time.Millisecond - 5*time.Millisecond, true},
		{20 * time.Millisecond, 30 * time.Millisecond, 0, true},
		{10 * time.Millisecond, 40 * time.Millisecond, 23 * time.Millisecond, true},
		{10 * time.Millisecond, 45 * time.Millisecond, 0, false},
		{-time.Millisecond, 10 * time.Millisecond, 0, false},
	} {
		got, ok := w.between(base, c.from, c.to)
		if got != c.want || ok != c.ok {
			t.Errorf("between %v and %v: %v (ok %v), want %v (ok %v)", c.from, c.to, got, ok, c.want, c.ok)
		}
	}
}

// TestCPUWaitsSampleTheProcess: on Linux the sampler reads the process's
// threads and stops when told.
func TestCPUWaitsSampleTheProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("run delay is read from Linux's /proc")
	}
	if _, ok := processRunDelay(); !ok {
		t.Fatal("no run delay read from /proc/self/task/*/schedstat")
	}
	w := startCPUWaits()
	w.stop()
	w.stop() // idempotent
	w.mu.Lock()
	n := len(w.samples)
	w.mu.Unlock()
	if n == 0 {
		t.Fatal("no sample taken")
	}
}
