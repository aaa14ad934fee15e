package store

// castagnoliReversed is the CRC32C polynomial, bit-reversed, as hash/crc32
// uses it.
const castagnoliReversed = 0x82f63b78

// x2n holds x^(2^k) modulo the CRC32C polynomial, k = 0 … 31.
var x2n = func() [32]uint32 {
	var t [32]uint32
	p := uint32(1) << 30 // x^1
	t[0] = p
	for k := 1; k < 32; k++ {
		p = multModP(p, p)
		t[k] = p
	}
	return t
}()

// multModP multiplies a and b modulo the CRC32C polynomial (reflected bit
// order, as zlib's multmodp).
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = (b >> 1) ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// CombineChecksums returns the CRC32C of a followed by b given only
// crcA = Checksum(a), crcB = Checksum(b) and lenB = len(b) (zlib's
// crc32_combine): a checkpoint that refers to consecutive sections of an
// earlier blob as one range gets that range's checksum without reading it.
func CombineChecksums(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	p := uint32(1) << 31 // x^0
	for k := 3; lenB != 0; k, lenB = k+1, lenB>>1 {
		if lenB&1 != 0 {
			p = multModP(x2n[k&31], p)
		}
	}
	return multModP(p, crcA) ^ crcB
}
