package mailbox

import "math/bits"

// ring is a FIFO of messages in a growable circular slice whose length is a
// power of two. It is not safe for concurrent use; the mailbox guards it with
// a mutex.
type ring struct {
	buf  []any
	head int // index of the oldest message
	n    int // number of messages
	min  int // capacity to shrink back to once empty
}

func newRing(capacity int) ring {
	c := 1 << bits.Len(uint(max(capacity, 1)-1)) // round up to a power of two
	return ring{buf: make([]any, c), min: c}
}

// push appends m and returns the new length.
func (r *ring) push(m any) int {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = m
	r.n++
	return r.n
}

// pop removes and returns the oldest message, or nil when empty.
func (r *ring) pop() any {
	if r.n == 0 {
		return nil
	}
	m := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if r.n == 0 {
		r.head = 0
	}
	return m
}

// shrink gives a burst's memory back: an empty ring much larger than its
// initial capacity goes back to that capacity.
func (r *ring) shrink() {
	if r.n == 0 && len(r.buf) > 64*r.min {
		r.buf = make([]any, r.min)
		r.head = 0
	}
}

func (r *ring) len() int { return r.n }

// grow doubles the buffer, unrolling the queue to start at index 0.
func (r *ring) grow() {
	nb := make([]any, 2*len(r.buf))
	k := copy(nb, r.buf[r.head:])
	copy(nb[k:], r.buf[:r.head])
	r.buf = nb
	r.head = 0
}
