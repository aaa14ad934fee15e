package state

import (
	"bytes"
	"runtime"
	"testing"
	"unsafe"
)

// TestCopyOnWriteReusesWhatTheLastSnapshotSaved: once a snapshot settled,
// the next one saves the values the task changes into the same chunks and
// maps, so that a task changing every key at every checkpoint does not
// allocate a copy of its state each time (garbage that brings the next
// collection closer and drafts the task into marking). The bytes stay those
// at each barrier. Not parallel: it reads the process's allocation counter.
func TestCopyOnWriteReusesWhatTheLastSnapshotSaved(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	groups := b.NonEmptyGroups()
	var saved []uint64
	for round := range 3 {
		snap, err := b.SnapshotAsync(groups)
		if err != nil {
			t.Fatal(err)
		}
		want := make(map[int]string, len(groups))
		for _, g := range groups {
			blob, err := b.SnapshotGroup(g)
			if err != nil {
				t.Fatal(err)
			}
			want[g] = string(blob)
		}
		// Every key changes before the encoder reaches its group: each is
		// saved.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i, key := range keys {
			g := i % 16
			v, _ := vt.Get(g, key)
			v.Count++
			v.Value[0]++ // in place: the saved value must be a copy
			vt.Put(g, key, v)
		}
		runtime.ReadMemStats(&after)
		saved = append(saved, after.TotalAlloc-before.TotalAlloc)
		blobs, err := snap.Encode()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if string(blobs[g]) != want[g] {
				t.Fatalf("round %d group %d: the blob is not the group at the barrier", round, g)
			}
		}
	}
	t.Logf("saving %d changed values of 1 KiB allocated %v bytes in three snapshots in turn", len(keys), saved)
	// The first snapshot allocates the copies (about 4 MB); the next ones
	// reuse its chunks.
	if saved[0] < uint64(len(keys))*1024 {
		t.Fatalf("the first snapshot's saves allocated %d bytes, less than the values they copy: the test measures nothing", saved[0])
	}
	for r, n := range saved[1:] {
		if n > saved[0]/20 {
			t.Fatalf("snapshot %d's saves allocated %d bytes, the first's %d: the last snapshot's chunks and maps were not reused", r+2, n, saved[0])
		}
	}
}

// TestTurnArenaHandsOutTheLastTurnsChunks: a turn hands out disjoint copies,
// the next turn the same chunks again, and of the chunks a turn did not
// use it keeps as many as it used.
func TestTurnArenaHandsOutTheLastTurnsChunks(t *testing.T) {
	var a turnArena
	small := make([]byte, arenaChunk/4)
	for i := range small {
		small[i] = byte(i)
	}
	var first [][]byte
	for range 8 { // two chunks' worth
		first = append(first, a.bytes(small))
	}
	if len(a.used) != 2 {
		t.Fatalf("eight quarter-chunk copies used %d chunks, want 2", len(a.used))
	}
	for i := 1; i < len(first); i++ {
		if &first[i][0] == &first[i-1][0] || cap(first[i-1]) != len(first[i-1]) {
			t.Fatalf("copy %d overlaps the one before or can grow into it", i)
		}
	}
	big := a.bytes(make([]byte, arenaChunk/4+1))
	if len(a.used) != 2 || len(big) != arenaChunk/4+1 {
		t.Fatalf("a copy longer than a quarter chunk went into the arena")
	}
	if got := a.bytes(nil); got == nil || len(got) != 0 {
		t.Fatalf("an empty copy is %v, want empty and not nil", got)
	}
	chunk0 := unsafe.SliceData(a.used[0])
	b := a.next()
	again := b.bytes([]byte("x"))
	if len(b.used) != 1 || len(b.spare) != 1 {
		t.Fatalf("the next turn used %d chunks and keeps %d spare, want 1 and 1", len(b.used), len(b.spare))
	}
	if p := unsafe.SliceData(again); p != unsafe.SliceData(a.used[1]) && p != chunk0 {
		t.Fatalf("the next turn's copy is not in a chunk of the turn before")
	}
	if c := b.next(); len(c.spare) != 2 {
		t.Fatalf("a turn after one that used one chunk of two keeps %d spare, want 2", len(c.spare))
	}
	if c := (&turnArena{}).next(); len(c.spare) != 0 {
		t.Fatalf("a turn after one that used none keeps %d spare, want 0", len(c.spare))
	}
}

// TestTurnArenaTakesNoFreshChunkForSomewhatMore: a turn that saves up to
// twice what the turn before saved hands out only the chunks of the turns
// before; one that used one chunk of four keeps two, and the turn after it
// takes a fresh chunk for a third.
func TestTurnArenaTakesNoFreshChunkForSomewhatMore(t *testing.T) {
	quarter := make([]byte, arenaChunk/4)
	fill := func(a *turnArena, chunks int) {
		for range 4 * chunks {
			a.bytes(quarter)
		}
	}
	var a turnArena
	fill(&a, 4)
	known := map[*byte]bool{}
	for _, c := range a.used {
		known[unsafe.SliceData(c)] = true
	}
	b := a.next()
	fill(&b, 2)
	c := b.next()
	if len(c.spare) != 4 {
		t.Fatalf("after a turn of 2 chunks of 4: %d spare, want 4", len(c.spare))
	}
	fill(&c, 4) // twice the turn before
	for i, ch := range c.used {
		if !known[unsafe.SliceData(ch)] {
			t.Fatalf("chunk %d of a turn twice the one before is fresh", i)
		}
	}
	d := c.next()
	fill(&d, 1)
	e := d.next()
	if len(e.spare) != 2 {
		t.Fatalf("after a turn of 1 chunk of 4: %d spare, want 2", len(e.spare))
	}
	fill(&e, 3)
	fresh := 0
	for _, ch := range e.used {
		if !known[unsafe.SliceData(ch)] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("a turn of 3 chunks with 2 spare took %d fresh chunks, want 1", fresh)
	}
}

// TestPutAfterAGetForAnotherSnapshotStillSaves: a Put right after a Get of
// the same key skips the copy on write the Get did, but only for the
// snapshot the Get did it for. A Put of the key Get read before the next
// barrier must still save its value for the new snapshot.
func TestPutAfterAGetForAnotherSnapshotStillSaves(t *testing.T) {
	b, vt, keys := largeValuesTable(t)
	groups := b.NonEmptyGroups()
	first, err := b.SnapshotAsync(groups)
	if err != nil {
		t.Fatal(err)
	}
	const g = 5
	key, other := keys[g], keys[g+16]
	v, _ := vt.Get(g, key) // kept for the first snapshot only
	if _, err := first.Encode(); err != nil {
		t.Fatal(err)
	}
	second, err := b.SnapshotAsync(groups)
	if err != nil {
		t.Fatal(err)
	}
	want, err := b.SnapshotGroup(g)
	if err != nil {
		t.Fatal(err)
	}
	v.Count, v.Value = -1, []byte("after the second barrier")
	vt.Put(g, key, v)
	w, _ := vt.Get(g, other) // a read-modify-write within the snapshot
	w.Count, w.Value = -2, []byte("also after it")
	vt.Put(g, other, w)
	blobs, err := second.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(blobs[g]) != string(want) {
		t.Fatalf("group %d's blob is not the group at the second barrier: a Put after a Get for the first snapshot did not save", g)
	}
}

// TestTurnArenaKeepsAppendsInPlace: what is appended to room's free room
// and fits is kept where it was written, its capacity ending at its
// length, and the next room starts after it; room moves to another chunk
// (the last turn's, when one is left) when its hint does not fit; an
// append that outgrew the room is copied, and one longer than a quarter
// chunk gets an allocation of its own.
func TestTurnArenaKeepsAppendsInPlace(t *testing.T) {
	var a turnArena
	r := a.room(10)
	got := a.keep(append(r, "0123456789"...))
	if string(got) != "0123456789" || unsafe.SliceData(got) != unsafe.SliceData(r[:1]) || cap(got) != len(got) {
		t.Fatalf("kept %q (cap %d): want it where room was, its capacity its length", got, cap(got))
	}
	r2 := a.room(10)
	if unsafe.SliceData(r2[:1]) != unsafe.SliceData(a.used[0][10:11]) {
		t.Fatalf("the next room does not start right after the kept append")
	}
	got2 := a.keep(append(r2, "abc"...))
	if string(got) != "0123456789" || string(got2) != "abc" {
		t.Fatalf("kept %q and %q: the second append changed the first", got, got2)
	}
	if len(a.used) != 1 {
		t.Fatalf("two small appends used %d chunks, want 1", len(a.used))
	}

	// An append that outgrows the room (the chunk's rest) is copied: the
	// value is kept whole, in the arena.
	rest := cap(a.free) - len(a.free)
	big := make([]byte, rest+1)
	for i := range big {
		big[i] = byte(i)
	}
	out := a.keep(append(a.room(0), big...))
	if !bytes.Equal(out, big) || cap(out) != len(out) {
		t.Fatalf("an append past the chunk's end was kept as %d bytes (cap %d), want the %d appended", len(out), cap(out), len(big))
	}

	// room moves to another chunk for a hint that does not fit: a fresh
	// one when the turn before left none, else one of its.
	b := a.next() // a used one chunk: b has it spare
	b.keep(append(b.room(1), make([]byte, arenaChunk-5)...))
	if len(b.used) != 1 || len(b.spare) != 0 || cap(b.free)-len(b.free) != 5 {
		t.Fatalf("after one append in place of all but 5 bytes: %d used, %d spare, %d left; want 1, 0, 5", len(b.used), len(b.spare), cap(b.free)-len(b.free))
	}
	if r3 := b.room(8); cap(r3) < 8 || len(b.used) != 2 {
		t.Fatalf("a room of 8 with 5 left: capacity %d, %d chunks used; want at least 8 and 2", cap(r3), len(b.used))
	}
	c := b.next()
	if r4 := c.room(8); cap(r4) < 8 || len(c.spare) != 1 || (unsafe.SliceData(r4[:1]) != unsafe.SliceData(b.used[0]) && unsafe.SliceData(r4[:1]) != unsafe.SliceData(b.used[1])) {
		t.Fatalf("the turn after: room not in a chunk of the turn before, or %d spare left (want 1)", len(c.spare))
	}
	huge := make([]byte, arenaChunk/4+1)
	used := len(c.used)
	kh := c.keep(append(c.room(len(huge)), huge...))
	if len(kh) != len(huge) || len(c.used) != used || len(c.spare) != 1 {
		t.Fatalf("a value longer than a quarter chunk: %d bytes kept, %d chunks used, %d spare (want %d, %d, 1)", len(kh), len(c.used), len(c.spare), len(huge), used)
	}
	if e := c.keep(c.room(0)); e == nil || len(e) != 0 {
		t.Fatalf("an empty append is kept as %v, want empty and not nil", e)
	}
}
