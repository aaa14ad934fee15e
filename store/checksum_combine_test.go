package store

import (
	"math/rand/v2"
	"testing"
)

// TestCombineChecksums checks the combined CRC32C of two parts against the
// checksum of their concatenation, for sizes from 0 to many kilobytes.
func TestCombineChecksums(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < 300; i++ {
		a := make([]byte, rng.IntN(3000))
		b := make([]byte, rng.IntN(70000))
		for k := range a {
			a[k] = byte(rng.Uint32())
		}
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		want := Checksum(append(append([]byte(nil), a...), b...))
		if got := CombineChecksums(Checksum(a), Checksum(b), int64(len(b))); got != want {
			t.Fatalf("seed %d: combine of %d and %d bytes = %08x, want %08x", seed, len(a), len(b), got, want)
		}
	}
}
