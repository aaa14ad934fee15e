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
	a.fit(len(b))
	return a.copy(b, arenaChunk)
}

// fit moves to another chunk, the last turn's if one is left, when n bytes
// (at most a quarter chunk: longer ones get an allocation of their own) do
// not fit in the current one.
func (a *turnArena) fit(n int) {
	if n <= arenaChunk/4 && n > cap(a.free)-len(a.free) {
		if k := len(a.spare); k > 0 {
			a.free, a.spare = a.spare[k-1][:0], a.spare[:k-1]
		} else {
			a.free = make([]byte, 0, arenaChunk)
		}
		a.used = append(a.used, a.free)
	}
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

// room returns the arena's free room, empty, to append to and settle with
// keep: appending there saves copying from a scratch buffer. When hint
// bytes (at most a quarter chunk) do not fit in the current chunk, it moves
// to another first, as bytes does, so that an append of about that size
// stays in place.
func (a *turnArena) room(hint int) []byte {
	a.fit(hint)
	return a.free[len(a.free):len(a.free)]
}

// keep returns b, appended to what room returned, as the arena's, its
// capacity ending where it does: in place when the append stayed in room's
// capacity, else copied (bytes).
func (a *turnArena) keep(b []byte) []byte {
	n := len(a.free)
	if len(b) > 0 && cap(a.free)-n >= len(b) && unsafe.SliceData(b) == unsafe.SliceData(a.free[n:n+1]) {
		a.free = a.free[:n+len(b)]
		return b[:len(b):len(b)]
	}
	return a.bytes(b)
}
