package actors

import "sync"

// blobBuffers keeps one spare buffer of a task's checkpoint blobs, so that
// a checkpoint lays out its sections in the buffer the previous one was
// stored from instead of allocating a state-sized one each time (garbage
// that makes the collector scan the whole heap again at every checkpoint).
// Uploader goroutines take and give back; a store does not keep the bytes
// it was given once PutBlob returned.
type blobBuffers struct {
	mu    sync.Mutex
	spare []byte
	last  int // len of the last buffer given back
}

// take returns an empty buffer with room for size bytes: the spare, unless
// it is too small, or more than twice too large (the state shrank: let the
// memory go).
func (p *blobBuffers) take(size int) []byte {
	p.mu.Lock()
	b := p.spare
	p.spare = nil
	p.mu.Unlock()
	if cap(b) < size || cap(b) > 2*size+minSpareBlob {
		return make([]byte, 0, size)
	}
	return b[:0]
}

// takeAny is take for a layout appended to before its size is known,
// which grows the buffer as needed: sized as the last buffer given back
// was filled (the previous checkpoint's blob).
func (p *blobBuffers) takeAny() []byte {
	p.mu.Lock()
	size := p.last
	p.mu.Unlock()
	return p.take(size)
}

// minSpareBlob is the slack below which a spare is never too large.
const minSpareBlob = 1 << 20

// give makes b the spare once nothing reads it any more; the larger of two
// stays. len(b) is what was laid out in it: takeAny's size.
func (p *blobBuffers) give(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = len(b)
	if cap(b) == 0 {
		return
	}
	if cap(b) > cap(p.spare) {
		p.spare = b
	}
}

// giveEmptied is give for a buffer handed back emptied after use (a
// streamed snapshot's, written out as it filled): the next takeAny is sized
// by its capacity, the most it held, so that it is reused instead of grown
// again from nothing.
func (p *blobBuffers) giveEmptied(b []byte) {
	p.give(b[:cap(b)])
}
