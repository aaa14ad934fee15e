package main

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/weirstream/weir/cli"
)

// TestBenchStateBadFlags: bad sizes, shares and cells are usage errors.
func TestBenchStateBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--keys", "0"},
		{"--value-bytes", "0"},
		{"--changing", "0"},
		{"--hot-order", "random"},
		{"--changing", "101"},
		{"--cells", "fast"},
		{"--checkpoint-mode", "none"},
		{"--paced-share", "0"},
		{"--paced-rate", "-1"},
		{"--paced-rate", "2e9"},
		{"--min-checkpoints", "-1"},
		{"--rounds", "0"},
		{"--rounds", "101"},
		{"--hold-pairs", "-1"},
		{"--hold-pairs", "101"},
		{"--hold-phase", "500ms"}, // shorter than the checkpoint interval
		{"--hold-phase", "2h"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := runStateBench(context.Background(), args, &out, &errb); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want usage (%s)", args, code, errb.String())
		}
	}
}

// TestChangedGroupsPct: one hot key changes one key group of 128; every key
// of a million changing changes them all, and so does 1 % of them (about
// 78 changed keys in each group).
func TestChangedGroupsPct(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		keys     int
		pct      float64
		shuffled bool
		want     float64
	}{{1000, 0.1, true, 100.0 / 128}, {1_000_000, 100, true, 100}, {1_000_000, 1, true, 100}, {1_000_000, 1, false, 100}} {
		if got := changedGroupsPct(c.keys, c.pct, c.shuffled); got != c.want {
			t.Errorf("%d keys, %v %% changing: %v %% of groups, want %v", c.keys, c.pct, got, c.want)
		}
	}
}

// TestHotKeys: the hot set is pct % of the keys, each once, the same at
// every call; shuffled it is not at an even step through them (which puts
// the values the fill allocated in key order at an even step through
// memory), sequential it is every n-th key in key order.
func TestHotKeys(t *testing.T) {
	t.Parallel()
	for _, shuffled := range []bool{true, false} {
		names, hot := hotKeys(10_000, 1, shuffled)
		_, again := hotKeys(10_000, 1, shuffled)
		if len(names) != 10_000 || len(hot) != 100 || !slices.Equal(hot, again) {
			t.Fatalf("shuffled %v: %d keys, %d hot, the same again: %v", shuffled, len(names), len(hot), slices.Equal(hot, again))
		}
		index := map[string]int{}
		for i, n := range names {
			index[n] = i
		}
		steps := map[int]bool{}
		seen := map[string]bool{}
		for j, k := range hot {
			if _, ok := index[k]; !ok || seen[k] {
				t.Fatalf("shuffled %v: hot key %q: a key %v, seen before %v", shuffled, k, ok, seen[k])
			}
			seen[k] = true
			if j > 0 {
				steps[index[k]-index[hot[j-1]]] = true
			}
		}
		if shuffled && len(steps) < len(hot)/2 {
			t.Fatalf("shuffled: %d distinct steps between %d hot keys: an even step", len(steps), len(hot))
		}
		if !shuffled && (len(steps) != 1 || !steps[100] || hot[0] != "k0") {
			t.Fatalf("sequential: steps %v from %s, want every 100th key from k0", steps, hot[0])
		}
		if _, all := hotKeys(50, 100, shuffled); len(all) != 50 {
			t.Fatalf("shuffled %v: 100 %% of 50 keys: %d hot", shuffled, len(all))
		}
	}
}

// TestStatePacer: records are due at the rate from the record the schedule
// is anchored at; a record made late counts its latency from when it was
// due (the time the job held the source up is latency too), one made on
// time from when it was made; reanchoring forgives what fell behind.
func TestStatePacer(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	p := statePacer{rate: 1000} // one record a millisecond
	if got := p.due(10, t0); !got.Equal(t0) {
		t.Fatalf("first record due %v, want the anchor %v", got, t0)
	}
	due := p.due(12, t0.Add(50*time.Millisecond)) // made 48 ms late
	if want := t0.Add(2 * time.Millisecond); !due.Equal(want) {
		t.Fatalf("record 12 due %v, want %v", due, want)
	}
	if got := latencyStart(due, t0.Add(50*time.Millisecond)); !got.Equal(due) {
		t.Fatalf("a late record counts from %v, want when it was due %v", got, due)
	}
	made := t0.Add(time.Millisecond + 500*time.Microsecond) // half a millisecond early
	if got := latencyStart(due, made); !got.Equal(made) {
		t.Fatalf("an early record counts from %v, want when it was made %v", got, made)
	}
	p.reanchor()
	t1 := t0.Add(time.Second)
	if got := p.due(5000, t1); !got.Equal(t1) {
		t.Fatalf("after reanchoring record 5000 due %v, want %v", got, t1)
	}
	if got, want := p.due(5010, t1), t1.Add(10*time.Millisecond); !got.Equal(want) {
		t.Fatalf("record 5010 due %v, want %v", got, want)
	}
}

// TestMergeStateRounds: a merged row gives the median of each figure over
// the rounds, ratios to none as taken within each round (not the ratio of
// the medians), the longest of the maxima and every round's checkpoints.
func TestMergeStateRounds(t *testing.T) {
	t.Parallel()
	round := func(none, async, vs, ckptMax, stall float64, ckpts int) []stateBenchRow {
		return []stateBenchRow{
			{stateCell: stateCell{Name: "none", None: true}, Rounds: 1, RecordsPerS: none, VsNonePct: 100},
			{stateCell: stateCell{Name: "async", Async: true}, Rounds: 1, RecordsPerS: async, VsNonePct: vs,
				CkptMaxMs: ckptMax, MaxBarrierStall: stall, Checkpoints: ckpts, CkptP50Ms: ckptMax / 2},
		}
	}
	got := mergeStateRounds([][]stateBenchRow{
		round(1000, 900, 90, 40, 0.2, 3),
		round(500, 400, 80, 90, 0.1, 2), // a slow round: the machine, not the cell
		round(800, 760, 95, 60, 0.3, 4),
	})
	if len(got) != 2 || got[0].Name != "none" || got[1].Name != "async" {
		t.Fatalf("rows %+v, want none then async", got)
	}
	n, a := got[0], got[1]
	if n.Rounds != 3 || n.RecordsPerS != 800 || n.VsNonePct != 100 {
		t.Errorf("none %+v: want 3 rounds, median 800 records/s, 100 %%", n)
	}
	// The ratio of the medians would be 760/800 = 95 %; the median of the
	// rounds' ratios is 90 %.
	if a.Rounds != 3 || a.RecordsPerS != 760 || a.VsNonePct != 90 {
		t.Errorf("async %+v: want 3 rounds, median 760 records/s, median ratio 90 %%", a)
	}
	if a.CkptMaxMs != 90 || a.MaxBarrierStall != 0.3 || a.Checkpoints != 9 || a.CkptP50Ms != 30 {
		t.Errorf("async %+v: want the longest maxima (90 ms, 0.3 ms), 9 checkpoints, median p50 30 ms", a)
	}
	if mergeStateRounds(nil) != nil {
		t.Error("no rounds gave rows")
	}
}

// TestStateSharedFieldsApart checks that no two of the values the bench's
// goroutines share per record are within cacheLines of each other or of
// what the heap puts before or after them.
func TestStateSharedFieldsApart(t *testing.T) {
	var sh stateShared
	offs := []uintptr{unsafe.Offsetof(sh.windowStart), unsafe.Offsetof(sh.repace), unsafe.Offsetof(sh.processed)}
	if offs[0] < cacheLines {
		t.Errorf("windowStart at %d: within %d bytes of what precedes the struct", offs[0], cacheLines)
	}
	for i := 1; i < len(offs); i++ {
		if offs[i]-offs[i-1] < cacheLines {
			t.Errorf("fields %d and %d are %d bytes apart, under %d", i-1, i, offs[i]-offs[i-1], cacheLines)
		}
	}
	if end := unsafe.Sizeof(sh) - offs[len(offs)-1]; end < cacheLines {
		t.Errorf("processed is %d bytes from the struct's end, under %d", end, cacheLines)
	}
}

// TestHeldPairs: a pair's ratio is its on phase's rate against its held
// phase's (not its records: the phases last unequally, the on phase until
// its last checkpoint ended), and the row takes the median of the pairs.
func TestHeldPairs(t *testing.T) {
	t.Parallel()
	pairs := []heldPair{
		{heldRecords: 1000, held: time.Second, onRecords: 1800, on: 2 * time.Second}, // 900/s against 1000/s
		{heldRecords: 2000, held: 2 * time.Second, onRecords: 1200, on: time.Second}, // 120 %
		{heldRecords: 500, held: time.Second, onRecords: 500, on: time.Second},       // 100 %
	}
	for i, want := range []float64{90, 120, 100} {
		if got := pairs[i].ratio(); got != want {
			t.Errorf("pair %d: %v %%, want %v", i, got, want)
		}
	}
	if got := vsHeld(pairs); got != 100 {
		t.Errorf("median of 90, 120 and 100 %%: %v", got)
	}
	if got := vsHeld(nil); got != 0 {
		t.Errorf("no pairs: %v, want 0", got)
	}
	if got := (heldPair{on: time.Second, onRecords: 10}).ratio(); got != 0 {
		t.Errorf("a held phase with no records: %v, want 0", got)
	}
}
