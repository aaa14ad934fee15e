package keygroups

import "math/bits"

// MurmurHash3 x86 32-bit constants (Austin Appleby, public domain reference).
const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

// Murmur3 returns MurmurHash3 x86 32-bit of data with the given seed.
// It matches the public reference implementation (smhasher MurmurHash3_x86_32)
// on every platform.
func Murmur3(data []byte, seed uint32) uint32 {
	return murmur3(data, seed)
}

// murmur3 is the hash over either a string or a byte slice, so string keys are
// hashed without converting (and allocating) a []byte.
func murmur3[T ~string | ~[]byte](data T, seed uint32) uint32 {
	h := seed
	n := len(data)
	i := 0
	for ; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		h = murmurBlock(h, k)
	}
	var k uint32
	switch n - i {
	case 3:
		k ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(data[i])
		h ^= murmurScramble(k)
	}
	return murmurFinal(h, uint32(n))
}

// murmur3Uint64 is murmur3 over the 8 bytes little-endian of u, seed 0.
func murmur3Uint64(u uint64) uint32 {
	h := murmurBlock(0, uint32(u))
	h = murmurBlock(h, uint32(u>>32))
	return murmurFinal(h, 8)
}

func murmurScramble(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

func murmurBlock(h, k uint32) uint32 {
	h ^= murmurScramble(k)
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func murmurFinal(h, length uint32) uint32 {
	h ^= length
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
