package keygroups

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDivisorEqualsModulo: Mod agrees with % for edge values and random ones,
// over divisors from 1 to 32768 (every valid maxParallelism) and beyond.
func TestDivisorEqualsModulo(t *testing.T) {
	xs := []uint32{0, 1, 2, 127, 128, 129, 32767, 32768, 32769, math.MaxUint32 - 1, math.MaxUint32}
	ds := []uint32{65537, math.MaxUint32 - 1, math.MaxUint32}
	for d := uint32(1); d <= 32768; d++ {
		ds = append(ds, d)
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, d := range ds {
		v := NewDivisor(d)
		for _, x := range xs {
			if got := v.Mod(x); got != x%d {
				t.Fatalf("%d %% %d: Mod gave %d, want %d", x, d, got, x%d)
			}
		}
		for range 50 {
			x := rng.Uint32()
			if got := v.Mod(x); got != x%d {
				t.Fatalf("%d %% %d: Mod gave %d, want %d (seed %d)", x, d, got, x%d, seed)
			}
		}
	}
}

func TestDivisorZeroPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewDivisor(0) did not panic")
		}
	}()
	NewDivisor(0)
}
