package recordcodec

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

const (
	// internSlots is the number of strings a Strings holds, a power of two.
	internSlots = 4096
	// maxInterned is the longest string, in bytes, a Strings caches.
	maxInterned = 32
	// maxMoves bounds how many cached strings one miss moves to their other
	// slot before one is dropped.
	maxMoves = 4
)

// Strings is a small cache of recently decoded short strings, owned by one
// decoding goroutine at a time; it is not safe for concurrent use.
//
// Given to DecodeBatchWith, it lets a decoded string of at most 32 bytes
// that equals one decoded before be the string decoded before, instead of a
// new allocation: keys in a stream repeat a lot. The strings it hands out
// are ordinary immutable strings, which may be kept and shared freely.
//
// It holds 4096 strings. Each string has two slots, picked by a cheap hash
// of its bytes; a lookup checks both, and a miss allocates the string and
// stores it in a free one of them, else in the first, moving the string
// there to its own other slot (cuckoo hashing, a few moves at most). So a
// working set of a couple of thousand keys stays cached, where a
// direct-mapped table of the same size would keep losing the keys that
// share a slot.
//
// The zero value is an empty cache ready to use. It is 64 KiB: keep one per
// decoding goroutine, behind a pointer.
type Strings struct {
	slots [internSlots]string
}

// str returns b as a string, from c when c holds it, else newly allocated
// and cached in c when short enough. A nil c only allocates.
func (c *Strings) str(b []byte) string {
	if c == nil || len(b) > maxInterned {
		return string(b)
	}
	return c.lookup(b)
}

// lookup returns the cached string equal to b, or allocates and caches one.
// b is at most maxInterned bytes.
func (c *Strings) lookup(b []byte) string {
	i, j := internSlotsOf(b)
	if s := c.slots[i]; s == string(b) { // no allocation: only compared
		return s
	}
	if s := c.slots[j]; s == string(b) {
		return s
	}
	s := string(b)
	c.insert(s, i, j)
	return s
}

// insert caches s, which is not empty and hashes to slots i and j. Empty
// slots hold "", which is never cached (it needs no allocation and equals
// an empty slot anyway).
func (c *Strings) insert(s string, i, j uint32) {
	if c.slots[i] == "" {
		c.slots[i] = s
		return
	}
	if c.slots[j] == "" {
		c.slots[j] = s
		return
	}
	pos := i
	for range maxMoves {
		s, c.slots[pos] = c.slots[pos], s
		a, b := internSlotsOf(unsafe.Slice(unsafe.StringData(s), len(s)))
		if a == pos {
			pos = b
		} else {
			pos = a
		}
		if c.slots[pos] == "" {
			c.slots[pos] = s
			return
		}
	}
	c.slots[pos] = s // the string that was there is dropped
}

// internSlotsOf returns the two slots of b, which differ.
func internSlotsOf(b []byte) (i, j uint32) {
	h := hashShort(b)
	i = uint32(h) & (internSlots - 1)
	j = uint32(h>>32) & (internSlots - 1)
	if i == j {
		j ^= 1
	}
	return i, j
}

// Arbitrary odd constants (wyhash's) for hashShort.
const (
	hashK0 = 0xa0761d6478bd642f
	hashK1 = 0xe7037ed1a0b428db
	hashK2 = 0x8ebc6af09c88c6e3
	hashK3 = 0x589965cc75374cc3
)

// hashShort hashes b, of at most maxInterned bytes, from its length and its
// bytes loaded a word at a time from both ends (overlapping for short
// input, so every byte counts), mixed by 64x64->128-bit multiplication. It
// is not meant to resist chosen input: a collision only costs an
// allocation.
func hashShort(b []byte) uint64 {
	n := len(b)
	var x, y uint64
	switch {
	case n > 8:
		x = binary.LittleEndian.Uint64(b)
		y = binary.LittleEndian.Uint64(b[n-8:])
		if n > 16 {
			x ^= mum(binary.LittleEndian.Uint64(b[8:])^hashK2, binary.LittleEndian.Uint64(b[n-16:])^hashK3)
		}
	case n >= 4:
		x = uint64(binary.LittleEndian.Uint32(b))
		y = uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		x = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mum(x^hashK0, y^hashK1^uint64(n))
}

// mum multiplies x and y and folds the 128-bit product to 64 bits.
func mum(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}
