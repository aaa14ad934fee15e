package barriers

import (
	"fmt"
	"testing"
	"time"
)

// permutations returns every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for pos := 0; pos <= len(p); pos++ {
			q := append(append(append([]int{}, p[:pos]...), n-1), p[pos:]...)
			out = append(out, q)
		}
	}
	return out
}

// permCase is one alignment configuration of the permutation test.
type permCase struct {
	name      string
	mode      Mode
	timeout   time.Duration
	fireAfter int // timeout: fire the timer after this many barriers (0: never)
	inOrder   bool
}

// TestEveryBarrierOrder delivers the barriers of one checkpoint in every order
// over 1..4 inputs, with buffers processed between barriers, in every mode,
// and checks the capture invariant and the kind of checkpoint completed.
func TestEveryBarrierOrder(t *testing.T) {
	for n := 1; n <= 4; n++ {
		cases := []permCase{
			{name: "aligned", mode: Aligned},
			{name: "unaligned", mode: Unaligned},
			{name: "unaligned-in-order", mode: Unaligned, inOrder: true},
			{name: "timeout-never", mode: Aligned, timeout: time.Hour},
		}
		for m := 1; m < n; m++ {
			cases = append(cases,
				permCase{name: fmt.Sprintf("timeout-after-%d", m), mode: Aligned, timeout: 5 * simStep, fireAfter: m},
				permCase{name: fmt.Sprintf("timeout-after-%d-in-order", m), mode: Aligned, timeout: 5 * simStep, fireAfter: m, inOrder: true})
		}
		for _, pc := range cases {
			for _, perm := range permutations(n) {
				name := fmt.Sprintf("n=%d/%s/%v", n, pc.name, perm)
				t.Run(name, func(t *testing.T) { runPermutation(t, name, n, pc, perm) })
			}
		}
	}
}

func runPermutation(t *testing.T, name string, n int, pc permCase, perm []int) {
	s := newSim(t, name, Config{Inputs: n, Mode: pc.mode, AlignedTimeout: pc.timeout})
	// Three buffers before the barrier on every input (input j gets j extra so
	// the inputs differ), one processed early, two after the barrier.
	for j := range n {
		for range 3 + j {
			s.emit(j)
		}
		s.process(j)
	}
	s.trigger()
	for j := range n {
		s.injectBarrier(j)
		s.emit(j)
		s.emit(j)
	}
	for pos, j := range perm {
		s.now += simStep
		if pc.fireAfter > 0 && pos == pc.fireAfter {
			s.now = s.timers[0].At
			if !s.fireTimer() {
				s.fatalf("timer did not fire")
			}
		}
		for k := range n { // interleave: one buffer from every input that can
			s.process(k)
		}
		for !s.canDeliver(j) {
			if !s.process(j) {
				s.fatalf("barrier of input %d cannot be delivered", j)
			}
		}
		s.deliver(j, pc.inOrder)
	}
	drain(s)
	if len(s.completes) != 1 {
		s.fatalf("completes %v, want one", s.completes)
	}
	done := s.completes[0]
	wantUnaligned := pc.mode == Unaligned || pc.fireAfter > 0
	if done.ID != 1 || done.Unaligned != wantUnaligned {
		s.fatalf("completed %v, want id 1 unaligned=%v", done, wantUnaligned)
	}
	if wantAlign := time.Duration(n-1) * simStep; done.AlignmentDuration != wantAlign && pc.fireAfter == 0 {
		s.fatalf("alignment %v, want %v", done.AlignmentDuration, wantAlign)
	}
	if !s.idle() {
		s.fatalf("not idle after drain")
	}
	for j := range n {
		if want := uint64(5 + j); s.processed[j] != want {
			s.fatalf("input %d processed %d, want %d", j, s.processed[j], want)
		}
	}
}

// drain processes everything still queued, delivering barriers as they can
// be, firing due timers and abort notices, until nothing is left to do.
func drain(s *sim) {
	for range 100000 {
		progress := s.deliverNotice() || s.fireTimer()
		for j := range s.in {
			progress = s.injectBarrier(j) || progress
			progress = s.deliver(j, false) || progress
			progress = s.process(j) || progress
		}
		if progress {
			s.now += simStep
			continue
		}
		if len(s.timers) == 0 {
			return
		}
		s.now = max(s.now, s.timers[0].At) // nothing else to do: let time pass
	}
	s.fatalf("drain did not finish")
}
