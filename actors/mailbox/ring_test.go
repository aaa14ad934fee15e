package mailbox

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "replay seed for randomised mailbox tests (0: pick one)")

func testSeed(t testing.TB) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed=%d)", s, s)
	return s
}

// The ring must behave like a plain FIFO slice under any mix of pushes and
// pops, across growth, wrap-around and shrinking.
func TestRingMatchesSliceModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	for _, capacity := range []int{0, 1, 3, 16} {
		r := newRing(capacity)
		if len(r.buf)&(len(r.buf)-1) != 0 {
			t.Fatalf("newRing(%d) capacity %d is not a power of two", capacity, len(r.buf))
		}
		var model []int
		next := 0
		for step := 0; step < 20000; step++ {
			burst := rng.IntN(100) == 0
			if burst || rng.IntN(2) == 0 {
				for k := 0; k < 1+rng.IntN(1+2000*b2i(burst)); k++ {
					if n := r.push(next); n != len(model)+1 {
						t.Fatalf("push returned length %d, want %d", n, len(model)+1)
					}
					model = append(model, next)
					next++
				}
				continue
			}
			if rng.IntN(50) == 0 {
				r.shrink()
			}
			got := r.pop()
			if len(model) == 0 {
				if got != nil {
					t.Fatalf("pop on empty ring = %v", got)
				}
				continue
			}
			if got != model[0] {
				t.Fatalf("pop = %v, want %d", got, model[0])
			}
			model = model[1:]
			if r.len() != len(model) {
				t.Fatalf("len = %d, want %d", r.len(), len(model))
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRingShrinksAfterBurst(t *testing.T) {
	r := newRing(4)
	for i := 0; i < 1000; i++ {
		r.push(i)
	}
	for i := 0; i < 1000; i++ {
		if got := r.pop(); got != i {
			t.Fatalf("pop = %v, want %d", got, i)
		}
	}
	r.shrink()
	if len(r.buf) != 4 {
		t.Fatalf("capacity after burst = %d, want 4", len(r.buf))
	}
	r.push("x")
	if r.pop() != "x" || r.pop() != nil {
		t.Fatal("ring unusable after shrinking")
	}
}
