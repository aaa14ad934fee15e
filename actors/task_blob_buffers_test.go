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
