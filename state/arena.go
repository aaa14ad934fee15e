package state

import "unsafe"

// arenaChunk is the most bytes a byteArena allocates at a time; a string or
// slice longer than a quarter of it gets an allocation of its own.
const arenaChunk = 64 << 10

// byteArena hands out strings and byte slices copied into shared chunks, so
// that restoring a key group allocates once per chunk instead of once per
// key and value. Handed-out regions never overlap and a slice's capacity
// ends where it does (appending to it copies). A chunk lives as long as any
// of its regions, so the bytes of a deleted key or a replaced value stay
// until their chunk-mates go too: at most the bytes that were restored.
type byteArena struct {
	free []byte // the current chunk: len used, cap allocated
}

// string returns a string holding b. left bounds the bytes still to decode
// (b included), so that a small input does not get a full-size chunk.
func (a *byteArena) string(b []byte, left int) string {
	if len(b) == 0 {
		return ""
	}
	c := a.copy(b, left)
	return unsafe.String(&c[0], len(c))
}

// bytes returns a copy of b, empty but not nil when b is; left as for
// string.
func (a *byteArena) bytes(b []byte, left int) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	return a.copy(b, left)
}

// copy copies non-empty b into the arena.
func (a *byteArena) copy(b []byte, left int) []byte {
	if len(b) > arenaChunk/4 {
		return append(make([]byte, 0, len(b)), b...)
	}
	if len(b) > cap(a.free)-len(a.free) {
		a.free = make([]byte, 0, max(len(b), min(arenaChunk, left)))
	}
	start := len(a.free)
	a.free = append(a.free, b...)
	return a.free[start:len(a.free):len(a.free)]
}

// turnArena is a byteArena whose chunks are handed out again on the next
// turn (next): for copies that all die together, as the values a
// snapshot's copy on write saves do once the snapshot settled. It keeps at
// most twice the chunks its last turn used.
type turnArena struct {
	byteArena
	used  [][]byte // chunks handed out from this turn
	spare [][]byte // chunks of the turn before, not handed out again yet
}

// bytes returns a copy of b, empty but not nil when b is.
func (a *turnArena) bytes(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	if len(b) <= arenaChunk/4 && len(b) > cap(a.free)-len(a.free) {
		if n := len(a.spare); n > 0 {
			a.free, a.spare = a.spare[n-1][:0], a.spare[:n-1]
		} else {
			a.free = make([]byte, 0, arenaChunk)
		}
		a.used = append(a.used, a.free)
	}
	return a.copy(b, arenaChunk)
}

// next returns the arena of the next turn, which hands out a's chunks
// again: nothing may read what a handed out any more. It keeps the chunks
// a's turn used and as many again of those it did not: a turn that saves
// up to twice what the last saved takes no fresh chunk from the heap, and
// the chunks of a turn that saved far more go within a few turns.
func (a *turnArena) next() turnArena {
	keep := min(len(a.spare), len(a.used))
	return turnArena{spare: append(a.used, a.spare[:keep]...)}
}
