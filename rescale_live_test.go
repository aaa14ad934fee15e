package weir_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// TestLiveRescaleKeycount rescales keycount's count stage 2 → 3 → 1 → 4
// while it runs, behind a slow stage: the output holds every key's counts
// 1..n/k, each once and in order, as an undisturbed run's does.
func TestLiveRescaleKeycount(t *testing.T) {
	const n, k = 80_000, 40
	out := filepath.Join(t.TempDir(), "out.jsonl")
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	res, err := weir.Run(context.Background(), g, weir.WithRescaleSchedule(
		weir.RescaleStep{After: 50 * time.Millisecond, Parallelism: map[string]int{"count": 3}},
		weir.RescaleStep{After: 100 * time.Millisecond, Parallelism: map[string]int{"count": 1}},
		weir.RescaleStep{After: 150 * time.Millisecond, Parallelism: map[string]int{"count": 4}},
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rescales {
		t.Logf("rescale %d: %s took %v moved %d (min %d) bytes %d longest pause %v %s", r.Step, r.Changes, r.Took, r.Moved, r.Minimum, r.Bytes, r.LongestPause, r.Err)
		if r.Err != "" {
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
	}
	if len(res.Rescales) != 3 {
		t.Fatalf("%d rescales, want 3", len(res.Rescales))
	}
	verifyKeycount(t, out, n, k)
}

// TestLiveRescaleStatelessSink rescales keycount's discarding sink (no key
// groups: its instances switch once drained and removed ones finish) and
// count with it, so count → sink turns between forward and rebalance: every
// record reaches the sink exactly once.
func TestLiveRescaleStatelessSink(t *testing.T) {
	const n, k = 80_000, 40
	var got atomic.Int64
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, SleepMs: 0.05, Discarded: &got})
	if err != nil {
		t.Fatal(err)
	}
	res, err := weir.Run(context.Background(), g, weir.WithRescaleSchedule(
		// At once: the request may come before the job is wired, and waits.
		weir.RescaleStep{After: time.Nanosecond, Parallelism: map[string]int{"count": 3, "sink": 3}},
		weir.RescaleStep{After: 100 * time.Millisecond, Parallelism: map[string]int{"sink": 1}},
		weir.RescaleStep{After: 150 * time.Millisecond, Parallelism: map[string]int{"count": 1, "sink": 2}},
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rescales {
		if r.Err != "" {
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
	}
	if len(res.Rescales) != 3 {
		t.Fatalf("%d rescales, want 3", len(res.Rescales))
	}
	if got.Load() != n || res.RecordsOut != n {
		t.Fatalf("sink got %d records (records out %d), want %d each", got.Load(), res.RecordsOut, n)
	}
}

// TestLiveRescaleAfterSourcesEnded rescales count once the sources have
// sent everything (their outputs ended) while count still works through
// its input: the added instances' channels from the sources end too, so the
// job finishes, exactly once and in order.
func TestLiveRescaleAfterSourcesEnded(t *testing.T) {
	const n, k = 4_000, 40 // fits in the channels: the sources end at once
	out := filepath.Join(t.TempDir(), "out.jsonl")
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	res, err := weir.Run(context.Background(), g, weir.WithRescaleSchedule(
		weir.RescaleStep{After: 200 * time.Millisecond, Parallelism: map[string]int{"count": 4}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rescales) != 1 || res.Rescales[0].Err != "" {
		t.Fatalf("rescales %+v, want one committed", res.Rescales)
	}
	verifyKeycount(t, out, n, k)
}
