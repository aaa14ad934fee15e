package store

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// remoteOnly is a store that embeds a Mirror but reads everything from its
// primary (as a node with local recovery off does).
type remoteOnly struct{ *Mirror }

func (r remoteOnly) ReadSections(ctx context.Context, job string, ckpt uint64, secs []SectionRequest) ([][]byte, ReadStats, error) {
	return ReadSections(ctx, r.Primary, job, ckpt, secs)
}

// eachCollected runs EachSection and returns a copy of every section
// handed over (its data is valid only during the call), the order they
// came in, and how many distinct buffers they were read into.
func eachCollected(t *testing.T, st Store, job string, ckpt uint64, secs []SectionRequest) ([][]byte, []int, int, ReadStats) {
	t.Helper()
	got := make([][]byte, len(secs))
	var order []int
	buffers := map[*byte]bool{}
	stats, err := EachSection(testCtx(t), st, job, ckpt, secs, func(i int, data []byte) error {
		if got[i] != nil {
			t.Fatalf("section %d handed over twice", i)
		}
		got[i] = bytes.Clone(data)
		order = append(order, i)
		if cap(data) > 0 {
			buffers[&data[:1][0]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, order, len(buffers), stats
}

// TestEachSectionStreamsLocalSectionsThroughOneBuffer: EachSection hands
// over every section once, verified; a Mirror reads its local sections one
// by one into one reused buffer (a restore never holds them all), the one
// damaged section comes from the checkpoint store after the local ones, and
// the counts are ReadSections'.
func TestEachSectionStreamsLocalSectionsThroughOneBuffer(t *testing.T) {
	m, primary, local, _ := newLoggedMirror(t)
	groups := []int{3, 4, 5, 6, 7, 8}
	ts := putTaskState(t, m, "j", 5, "count", 0, groups, 2048, 2)
	damaged := 1 // key group 4
	flipLocalByte(t, local, "j", 5, "count/0/state", ts.secs[damaged].Ref.Offset+10)
	got, order, buffers, stats := eachCollected(t, m, "j", 5, ts.secs)
	checkSections(t, got, ts.want)
	size := ts.secs[damaged].Ref.Size
	checkStats(t, stats, len(ts.secs)-1, 1, sumSizes(ts.secs)-size, size)
	if n := primary.read(); n != 1 {
		t.Fatalf("%d sections read from the checkpoint store, want 1", n)
	}
	if order[len(order)-1] != damaged {
		t.Fatalf("sections came in order %v, want the remote one (%d) last", order, damaged)
	}
	// The local sections were read into one buffer (the largest first
	// section sized it); the remote one is a slice of its own object.
	if buffers != 2 {
		t.Fatalf("sections were read into %d buffers, want 2 (one reused for the %d local sections, one remote)", buffers, len(ts.secs)-1)
	}
}

// TestEachSectionRemoteOnlyStoreReadsNoLocalSection: a store that embeds a
// Mirror but reads remotely (local recovery off) is not streamed from the
// Mirror's local copy: every section is counted remote.
func TestEachSectionRemoteOnlyStoreReadsNoLocalSection(t *testing.T) {
	m, primary, _, _ := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 2, "count", 0, []int{0, 1, 2}, 512, 1)
	got, _, _, stats := eachCollected(t, remoteOnly{m}, "j", 2, ts.secs)
	checkSections(t, got, ts.want)
	checkStats(t, stats, 0, len(ts.secs), 0, sumSizes(ts.secs))
	if n := primary.read(); n != len(ts.secs) {
		t.Fatalf("%d sections read from the checkpoint store, want %d", n, len(ts.secs))
	}
}

// TestEachSectionStopsAtTheCallersError: an error of the callback ends the
// read at once and comes back as it is (not as a read failure).
func TestEachSectionStopsAtTheCallersError(t *testing.T) {
	m, _, _, _ := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 3, "count", 0, []int{0, 1, 2, 3}, 256, 0)
	stop := errors.New("decode failed")
	calls := 0
	_, err := EachSection(testCtx(t), m, "j", 3, ts.secs, func(i int, data []byte) error {
		calls++
		return stop
	})
	var se *SectionError
	if err != stop || errors.As(err, &se) {
		t.Fatalf("error %v, want the callback's own", err)
	}
	if calls != 1 {
		t.Fatalf("callback called %d times after failing, want 1", calls)
	}
}
