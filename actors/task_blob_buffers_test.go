package actors

import "testing"

// TestBlobBuffersReuse: a checkpoint's blob is laid out in the buffer the
// previous one was stored from when it fits, and in a new one when it does
// not or when the spare is more than twice too large (the state shrank).
func TestBlobBuffersReuse(t *testing.T) {
	t.Parallel()
	var p blobBuffers
	first := p.take(4 << 20)
	if cap(first) < 4<<20 || len(first) != 0 {
		t.Fatalf("take: len %d cap %d, want empty with room for %d", len(first), cap(first), 4<<20)
	}
	first = append(first, 1, 2, 3)
	p.give(first)
	second := p.take(3 << 20)
	if len(second) != 0 || cap(second) != cap(first) || &second[:1][0] != &first[0] {
		t.Fatalf("take after give: a new buffer (cap %d), want the spare back, emptied", cap(second))
	}
	if again := p.take(1 << 20); cap(again) == cap(first) {
		t.Fatal("the spare was handed out twice")
	}
	p.give(second)
	if big := p.take(8 << 20); cap(big) < 8<<20 {
		t.Fatalf("take of 8 MiB with a 4 MiB spare: cap %d", cap(big))
	}
	p.give(second)
	if small := p.take(1 << 10); cap(small) == cap(second) {
		t.Fatal("a 4 MiB spare handed out for 1 KiB: it should be let go")
	}
	p.give(make([]byte, 0, 1<<10))
	p.give(second)
	if got := p.take(3 << 20); cap(got) != cap(second) {
		t.Fatalf("after giving a small and a large buffer the spare has cap %d, want the larger %d", cap(got), cap(second))
	}
}

// TestBlobBuffersTakeAny: a layout whose size is known only once written
// gets the spare when the last buffer given back was filled to at least
// half of it, else a new buffer as large as that fill (the state shrank, or
// no spare yet).
func TestBlobBuffersTakeAny(t *testing.T) {
	t.Parallel()
	var p blobBuffers
	if b := p.takeAny(); len(b) != 0 {
		t.Fatalf("takeAny with nothing given: len %d", len(b))
	}
	full := make([]byte, 3<<20, 4<<20)
	p.give(full)
	got := p.takeAny()
	if len(got) != 0 || cap(got) != cap(full) || &got[:1][0] != &full[0] {
		t.Fatalf("takeAny after a 3 MiB blob in a 4 MiB buffer: cap %d, want the spare back, emptied", cap(got))
	}
	p.give(got[:1<<10]) // the state shrank to 1 KiB
	small := p.takeAny()
	if cap(small) == cap(full) || cap(small) < 1<<10 {
		t.Fatalf("takeAny after a 1 KiB blob in a 4 MiB buffer: cap %d, want a new buffer of about 1 KiB", cap(small))
	}
}

// TestBlobBuffersGiveEmptied: a buffer given back emptied (a streamed
// snapshot's) comes back from takeAny, not a new one grown from nothing.
func TestBlobBuffersGiveEmptied(t *testing.T) {
	t.Parallel()
	var p blobBuffers
	buf := make([]byte, 0, 3<<20)
	p.giveEmptied(buf)
	got := p.takeAny()
	if len(got) != 0 || cap(got) != cap(buf) || &got[:1][0] != &buf[:1][0] {
		t.Fatalf("takeAny after an emptied 3 MiB buffer: len %d cap %d, want it back, empty", len(got), cap(got))
	}
}
