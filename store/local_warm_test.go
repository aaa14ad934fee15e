package store

import (
	"testing"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/poll"
)

// warmLeft is the warm memory not taken yet, and where it starts.
func warmLeft(l *Local) (int, uintptr) {
	l.warm.mu.Lock()
	defer l.warm.mu.Unlock()
	if len(l.warm.buf) == 0 {
		return 0, 0
	}
	return len(l.warm.buf), uintptr(unsafe.Pointer(&l.warm.buf[0]))
}

// waitWarm waits until the warm memory is faulted in.
func waitWarm(t *testing.T, l *Local) (int, uintptr) {
	t.Helper()
	var n int
	var at uintptr
	if !poll.Until(time.Minute, time.Millisecond, func() bool { n, at = warmLeft(l); return n > 0 }) {
		t.Fatal("the warm memory was never faulted in")
	}
	return n, at
}

// within reports whether every section lies in [at, at+n).
func within(secs [][]byte, at uintptr, n int) bool {
	for _, s := range secs {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		if p < at || p+uintptr(cap(s)) > at+uintptr(n) {
			return false
		}
	}
	return true
}

// TestPrewarmedMemoryServesRestores: restores take their shared buffers
// from the memory faulted in ahead, exactly their size each, the bytes are
// the sections' own (one damaged section still comes from the checkpoint
// store), and a restore that needs more than is left allocates its own.
func TestPrewarmedMemoryServesRestores(t *testing.T) {
	m, primary, local, logs := newLoggedMirror(t)
	groups := []int{0, 1, 2, 3, 4, 5, 6, 7}
	ts := putTaskState(t, m, "j", 3, "count", 0, groups, 1<<20, 2) // 8 MiB of key groups
	size := sumSizes(ts.secs)
	warm := 2*size + slabMin - 1 // two restores, then less than slabMin
	if !local.Prewarm(warm, time.Minute, m.Log) {
		t.Fatal("Prewarm refused a valid size")
	}
	n, at := waitWarm(t, local)
	if int64(n) != warm {
		t.Fatalf("%d bytes warm, want %d", n, warm)
	}
	damaged := 5
	flipLocalByte(t, local, "j", 3, "count/0/state", ts.secs[damaged].Ref.Offset+4096)
	got := readOneRemotely(t, m, primary, 3, ts, damaged)
	locals := append(append([][]byte{}, got[:damaged]...), got[damaged+1:]...)
	if !within(locals, at, n) {
		t.Fatal("the local sections were not read into the warm memory")
	}
	if left, _ := warmLeft(local); int64(left) != warm-size {
		t.Fatalf("%d bytes left after one restore, want %d", left, warm-size)
	}

	// The second restore takes its size; below slabMin are left, so the
	// rest is given back.
	again, _, err := ReadSections(testCtx(t), m, "j", 3, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, again, ts.want)
	if !within(again[:damaged], at, n) {
		t.Fatal("the second restore's sections were not read into the warm memory")
	}
	if left, _ := warmLeft(local); left != 0 {
		t.Fatalf("%d bytes kept after less than slabMin was left, want none", left)
	}
	if len(logs.Lines(`"reason":"used"`)) == 0 {
		t.Fatalf("no log of the memory given back once used:\n%s", logs)
	}
	third, _, err := ReadSections(testCtx(t), m, "j", 3, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, third, ts.want)
	if within(third[:1], at, n) {
		t.Fatal("a restore after the warm memory was used up read into it")
	}
}

// TestPrewarmBoundaries: sizes no restore shares a buffer for, no time to
// keep it, a second call while memory is offered and a closed store are
// refused; a restore larger than what is left leaves it for others; once
// used up, memory is faulted in again on request; memory not taken in time
// is given back (logged); Close stops a fault-in under way.
func TestPrewarmBoundaries(t *testing.T) {
	logs := &logbuf.Buffer{}
	log := zerolog.New(logs)
	newLocal := func() *Local {
		l, err := NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		return l
	}
	for _, c := range []struct {
		name string
		n    int64
		keep time.Duration
	}{
		{"below slabMin", slabMin - 1, time.Minute},
		{"negative", -1, time.Minute},
		{"above slabMax", slabMax + 1, time.Minute},
		{"no time to keep it", slabMin, 0},
	} {
		if newLocal().Prewarm(c.n, c.keep, log) {
			t.Errorf("%s: Prewarm(%d, %v) accepted", c.name, c.n, c.keep)
		}
	}
	closed := newLocal()
	_ = closed.Close()
	if closed.Prewarm(slabMin, time.Minute, log) {
		t.Error("Prewarm on a closed store accepted")
	}

	l := newLocal()
	if !l.Prewarm(slabMin, time.Minute, log) || l.Prewarm(slabMin, time.Minute, log) {
		t.Fatal("want the first Prewarm accepted and the second refused")
	}
	waitWarm(t, l)
	if b := l.warm.take(slabMin + 1); b != nil {
		t.Fatal("took more than was warm")
	}
	if b := l.warm.take(0); b != nil {
		t.Fatal("took an empty buffer")
	}
	if left, _ := warmLeft(l); left != slabMin {
		t.Fatalf("%d bytes left after refused takes, want %d", left, slabMin)
	}

	// Used up: a later call faults memory in again; the expiry of the
	// first call does not give the second call's memory back.
	if b := l.warm.take(slabMin); len(b) != slabMin {
		t.Fatalf("took %d bytes, want %d", len(b), slabMin)
	}
	if !l.Prewarm(2*slabMin, time.Minute, log) {
		t.Fatal("Prewarm after the memory was used up refused")
	}
	waitWarm(t, l)
	l.warm.expire(l.warm.gen - 1)
	if left, _ := warmLeft(l); left != 2*slabMin {
		t.Fatalf("%d bytes left after an earlier call's expiry, want %d", left, 2*slabMin)
	}

	expiring := newLocal()
	expiring.Prewarm(slabMin, 20*time.Millisecond, log)
	if !poll.Until(time.Minute, time.Millisecond, func() bool {
		expiring.warm.mu.Lock()
		defer expiring.warm.mu.Unlock()
		return expiring.warm.buf == nil && expiring.warm.timer == nil && len(logs.Lines(`"reason":"not taken in time"`)) > 0
	}) {
		t.Fatalf("the memory not taken was not given back in time:\n%s", logs)
	}

	big := newLocal()
	big.Prewarm(1<<30, time.Minute, log)
	_ = big.Close() // must stop faulting a gigabyte in, not wait for it
	if left, _ := warmLeft(big); left != 0 {
		t.Fatalf("%d bytes kept after Close", left)
	}
}
