package barriers

import (
	"fmt"
	"github.com/weirstream/weir/internal/testseed"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRandomSchedules runs many random interleavings of data, barriers,
// timeouts, coordinator aborts, late barriers and superseding checkpoints,
// checking the capture invariant at every completed checkpoint and that the
// task always ends idle and can still complete a checkpoint.
func TestRandomSchedules(t *testing.T) {
	testseed.Run(t, 600, 100, func(seed uint64) { runRandom(t, seed) })
}

func runRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	cfg := Config{Inputs: 1 + rng.IntN(4), Mode: Aligned}
	switch rng.IntN(3) {
	case 0:
		cfg.Mode = Unaligned
	case 1:
		cfg.AlignedTimeout = time.Duration(1+rng.IntN(30)) * simStep
	}
	cfg.MaxConcurrent = max(0, rng.IntN(5)-2) // 0 (one at a time) in 3 of 5 runs, else 1 or 2
	if rng.IntN(2) == 0 {
		cfg.MaxInflightBytes = int64(1+rng.IntN(8)) * simBufferBytes // the size trigger in half of the runs
	}
	aborts := rng.IntN(2) == 0
	// A task of an unaligned job: an aligned aligner whose barriers come
	// overtaking, with up to 4 checkpoints in flight.
	overtaking := cfg.Mode == Aligned && cfg.AlignedTimeout == 0 && rng.IntN(2) == 0
	if overtaking {
		cfg.MaxConcurrent = 1 + rng.IntN(4)
	}
	passRequeued := rng.IntN(2) == 0
	where := fmt.Sprintf("seed %d (replay: go test -run TestRandomSchedules ./barriers -seed=%d) %+v aborts=%v overtaking=%v passRequeued=%v",
		seed, seed, cfg, aborts, overtaking, passRequeued)
	s := newSim(t, where, cfg)
	s.overtaking, s.passRequeued = overtaking, passRequeued

	const steps = 3000
	const maxSent = 400
	for range steps {
		s.now += simStep
		n := cfg.Inputs
		switch r := rng.IntN(100); {
		case r < 25:
			if j := rng.IntN(n); s.in[j].sent < maxSent {
				s.emit(j)
			}
		case r < 30:
			s.trigger()
		case r < 40:
			s.injectBarrier(rng.IntN(n))
		case r < 70:
			s.process(rng.IntN(n))
		case r < 85:
			s.deliver(rng.IntN(n), rng.IntN(2) == 0)
		case r < 90:
			s.fireTimer()
		case r < 92:
			s.reportBlocked(rng.IntN(n))
		case r < 94:
			if aborts {
				s.coordAbort(rng.IntN(4), func(int) bool { return rng.IntN(2) == 0 })
			}
		default:
			if rng.IntN(3) == 0 { // abort notices may come late
				s.deliverNotice()
			}
		}
	}
	drain(s)
	if !s.idle() {
		for j, in := range s.in {
			t.Logf("input %d blocked=%v processed=%d aligner blocked=%d held=%+v queue=%+v inOrder=%v overtake=%v passed=%v", j, in.blocked, s.processed[j], s.a.blocked[j], s.a.held[j], in.queue, in.inOrder, in.overtake, in.passed)
		}
		s.fatalf("not idle after drain: in progress=%v coordinator %v notices %v aborts %v completes %d", s.a.InProgressIDs(), s.inflight, s.notices, s.aborts, len(s.completes))
	}
	// Liveness: one more checkpoint completes once everything is delivered.
	before := len(s.completes)
	s.trigger()
	drain(s)
	if len(s.completes) != before+1 || s.completes[before].ID != s.lastID {
		s.fatalf("final checkpoint %d did not complete: %v", s.lastID, s.completes[before:])
	}
	if !aborts && !passRequeued && len(s.aborts) > 0 {
		// (A barrier that passes an older one sent back to alignment
		// supersedes it: that abort needs no coordinator.)
		s.fatalf("aborted %v without coordinator aborts", s.aborts)
	}
}
