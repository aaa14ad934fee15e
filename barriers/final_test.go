package barriers

import (
	"fmt"
	"testing"
	"time"
)

// TestFinalBarrierEveryOrder delivers the final checkpoint's barriers in every
// order over 1..4 inputs, in every mode, with timers fired as late as anyone
// likes and buffers processed between barriers, and checks that it always
// completes aligned: no timer, no switch, no capture, and the snapshot only
// after the last barrier.
func TestFinalBarrierEveryOrder(t *testing.T) {
	cfgs := []Config{
		{Mode: Aligned},
		{Mode: Aligned, AlignedTimeout: time.Millisecond},
		{Mode: Unaligned},
	}
	for n := 1; n <= 4; n++ {
		for _, base := range cfgs {
			for _, perm := range permutations(n) {
				cfg := base
				cfg.Inputs = n
				name := fmt.Sprintf("n=%d/%v/timeout=%v/%v", n, cfg.Mode, cfg.AlignedTimeout, perm)
				t.Run(name, func(t *testing.T) { runFinalOrder(t, cfg, perm) })
			}
		}
	}
}

func runFinalOrder(t *testing.T, cfg Config, perm []int) {
	a, err := NewAligner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const id = 9
	last := make([]uint64, cfg.Inputs) // per input: last buffer before its barrier
	for j := range last {
		last[j] = uint64(2 + j)
	}
	processed := make([]uint64, cfg.Inputs)
	processUpTo := func(j int, seq uint64) {
		for processed[j] < seq {
			processed[j]++
			capture, err := a.OnBuffer(j, processed[j])
			if err != nil {
				t.Fatalf("OnBuffer(%d, %d): %v", j, processed[j], err)
			}
			if capture {
				t.Fatalf("buffer %d on input %d captured for a final checkpoint", processed[j], j)
			}
		}
	}
	now := time.Duration(0)
	var all []Action
	for pos, j := range perm {
		now += time.Second
		for k := range cfg.Inputs { // the other inputs make progress meanwhile
			if k != j && processed[k] < last[k] {
				processUpTo(k, processed[k]+1)
			}
		}
		processUpTo(j, last[j])
		acts, err := a.OnFinalBarrier(j, id, last[j], now)
		if err != nil {
			t.Fatalf("OnFinalBarrier(in=%d): %v", j, err)
		}
		all = append(all, acts...)
		if pos < len(perm)-1 {
			if len(acts) != 0 {
				t.Fatalf("barrier %d of %d gave %v, want nothing before alignment", pos+1, len(perm), acts)
			}
			if got := a.OnTimeout(id, now+time.Hour); len(got) != 0 {
				t.Fatalf("timeout of a final checkpoint gave %v", got)
			}
		}
	}
	want := fmt.Sprint([]Action{Snapshot{ID: id}, ForwardBarrier{ID: id, Final: true}, Unblock{ID: id, Inputs: seq(cfg.Inputs)},
		Complete{ID: id, AlignmentDuration: time.Duration(len(perm)-1) * time.Second}})
	if got := fmt.Sprint(all); got != want {
		t.Fatalf("actions %s, want %s", got, want)
	}
	if _, busy := a.InProgress(); busy {
		t.Fatal("still in progress after completing")
	}
}

// seq is 0..n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
