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
	res, err := weir.Run(context.Background(), g, countTo3To1To4(50*time.Millisecond))
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

// TestLiveRescaleKeycountCheckpoints is TestLiveRescaleKeycount with
// checkpoints every 30 ms, aligned and unaligned: a rescale waits for a
// running checkpoint and checkpoints wait for it; after each commit the
// checkpoints cover the new instances (and no longer the removed ones), and
// the committed output is every key's counts once each and in order.
func TestLiveRescaleKeycountCheckpoints(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			const n, k = 80_000, 40
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g,
				weir.WithCheckpoints(weir.CheckpointConfig{Mode: mode, Interval: 30 * time.Millisecond, Timeout: 30 * time.Second, Retain: 2,
					StateDir: filepath.Join(dir, "state")}),
				countTo3To1To4(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Rescales {
				if r.Err != "" {
					t.Fatalf("rescale %d: %s", r.Step, r.Err)
				}
			}
			if len(res.Rescales) != 3 || len(res.Checkpoints) < 2 {
				t.Fatalf("%d rescales, %d checkpoints; want 3 and some", len(res.Rescales), len(res.Checkpoints))
			}
			verifyKeycount(t, out, n, k)
		})
	}
}

// countTo3To1To4 rescales keycount's count to 3, 1 and 4 instances, a step
// every gap from gap/2 on (each step also waits for the one before it).
func countTo3To1To4(gap time.Duration) weir.RunOption {
	return weir.WithRescaleSchedule(
		weir.RescaleStep{After: gap / 2, Parallelism: map[string]int{"count": 3}},
		weir.RescaleStep{After: gap/2 + gap, Parallelism: map[string]int{"count": 1}},
		weir.RescaleStep{After: gap/2 + 2*gap, Parallelism: map[string]int{"count": 4}},
	)
}
