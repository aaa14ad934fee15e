package keygroups

import "math/bits"

// Divisor computes x % d for a fixed d without a division instruction
// (Lemire's "fastmod"): key group = hash % maxParallelism is on every
// record's path, twice. The result equals x % d for every uint32 x and
// every d ≥ 1.
type Divisor struct {
	m uint64 // ⌈2^64 / d⌉, wrapping to 0 for d = 1
	d uint32
}

// NewDivisor prepares x % d; d must be at least 1.
func NewDivisor(d uint32) Divisor {
	if d == 0 {
		panic("keygroups: divisor 0")
	}
	return Divisor{m: ^uint64(0)/uint64(d) + 1, d: d}
}

// Mod returns x % d.
func (v Divisor) Mod(x uint32) uint32 {
	hi, _ := bits.Mul64(v.m*uint64(x), uint64(v.d))
	return uint32(hi)
}
