package weir_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/samples/keycount"
)

// checkpointsEvery30ms checkpoints in mode every 30 ms into dir.
func checkpointsEvery30ms(mode weir.CheckpointMode, dir string) weir.RunOption {
	return weir.WithCheckpoints(weir.CheckpointConfig{Mode: mode, Interval: 30 * time.Millisecond, Timeout: 30 * time.Second, Retain: 2,
		StateDir: filepath.Join(dir, "state")})
}

// stagingSinkSteps grows keycount's two-phase sink 2 → 3 (with count) → 4
// (alone: count → sink turns rebalance), shrinks it to 1 (the three
// removed instances hand their staged output to instance 0), and shrinks
// count to 1 while the sink grows to 3 again (fresh instances).
var stagingSinkSteps = []weir.RescaleStep{
	{After: 25 * time.Millisecond, Parallelism: map[string]int{"count": 3, "sink": 3}},
	{After: 75 * time.Millisecond, Parallelism: map[string]int{"sink": 4}},
	{After: 100 * time.Millisecond, Parallelism: map[string]int{"sink": 1}},
	{After: 125 * time.Millisecond, Parallelism: map[string]int{"count": 1, "sink": 3}},
}

// TestLiveRescaleStagingSink rescales a two-phase sink that hands its
// staged output off live with checkpoints, aligned and unaligned, up and
// down: added instances join the commit protocol (the job ends only once
// they committed the final checkpoint), removed ones hand what they staged
// and have not committed to a remaining instance, which commits it, and
// the committed output is every key's counts once each, as an undisturbed
// run's.
func TestLiveRescaleStagingSink(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			// Long enough that the last step comes before the input ends on a
			// busy machine.
			const n, k = 100_000, 40
			log := newCommitLog()
			g := weir.NewGraph("keycount")
			stagedKeycount(g, "", n, k, 2, 2, 0.05, log)
			res, err := weir.Run(context.Background(), g, checkpointsEvery30ms(mode, t.TempDir()), weir.WithRescaleSchedule(stagingSinkSteps...))
			if err != nil {
				t.Fatal(err)
			}
			checkStagingSinkSteps(t, res.Rescales, false)
			log.verify(t, n, k)
			if got := log.Instances(); got != 4 {
				t.Fatalf("%d sink instances committed output, want 4", got)
			}
			if log.TakenOver() == 0 {
				t.Fatal("no removed instance's staged output was committed by the instance that took it over")
			}
		})
	}
}

// checkStagingSinkSteps checks the stats of stagingSinkSteps: every step
// committed (or, under chaos, was aborted by a failure).
func checkStagingSinkSteps(t *testing.T, stats []weir.RescaleStat, chaos bool) {
	t.Helper()
	if len(stats) != len(stagingSinkSteps) {
		t.Fatalf("%d rescale steps ran, want %d: %+v", len(stats), len(stagingSinkSteps), stats)
	}
	for _, r := range stats {
		t.Logf("rescale %d: %s took %v %s", r.Step, r.Changes, r.Took, r.Err)
		switch {
		case chaos && chaosStopped(r.Err):
		case r.Err == "":
		default:
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
	}
}

// chaosStopped reports whether a rescale step's error is one a kill
// explains: the rescale aborted by a failure, refused while a region
// restarts, or too late for a job that restarts slowed down less than
// planned (its input ended first).
func chaosStopped(err string) bool {
	for _, s := range []string{"aborted", "restarting", "the job's input has ended", "the job ended first"} {
		if strings.Contains(err, s) {
			return true
		}
	}
	return false
}

// chaosKills kills a random task or channel actor every period (seeded),
// with restarts enough for the whole run.
func chaosKills(every time.Duration, seed int64) weir.RunOption {
	sup := weir.DefaultSupervision()
	sup.MaxRestarts, sup.RestartWindow = 1000, time.Minute
	sup.ChaosKillEvery, sup.ChaosSeed = every, seed
	return weir.WithSupervision(sup)
}

// chaosDeadline bounds a chaos run (a few seconds when it works): one
// that stalls fails the test in a minute instead of holding the suite.
func chaosDeadline(t *testing.T) (context.Context, context.CancelFunc) {
	t.Helper()
	return context.WithTimeout(context.Background(), time.Minute)
}

// TestLiveRescaleSinkWithoutStagingCheckpoints rescales a sink that writes
// at once (no staged output) 2 → 3 → 1 with checkpoints, aligned and
// unaligned: removed instances have nothing uncommitted, and every record
// reaches the sink exactly once.
func TestLiveRescaleSinkWithoutStagingCheckpoints(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			const n, k = 60_000, 40
			var got atomic.Int64
			g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, SleepMs: 0.05, Discarded: &got})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g, checkpointsEvery30ms(mode, t.TempDir()), weir.WithRescaleSchedule(
				weir.RescaleStep{After: 25 * time.Millisecond, Parallelism: map[string]int{"sink": 3}},
				weir.RescaleStep{After: 75 * time.Millisecond, Parallelism: map[string]int{"sink": 1}},
			))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Rescales {
				if r.Err != "" {
					t.Fatalf("rescale %d: %s", r.Step, r.Err)
				}
			}
			if len(res.Rescales) != 2 {
				t.Fatalf("%d rescales, want 2", len(res.Rescales))
			}
			if got.Load() != n {
				t.Fatalf("sink got %d records, want %d", got.Load(), n)
			}
		})
	}
}

// TestLiveRescaleSeveralRegions rescales, with checkpoints, operators of a
// job made of two independent keycount pipelines (two failover regions):
// a's count 2 → 3 → 1 and b's two-phase sink 2 → 3, while each pipeline
// runs. Each pipeline's committed output is exactly once. The count stages
// work 0.2 ms a record (20 s of input) until the third rescale commits,
// then run the rest at full speed: the job outlives its rescales however
// slow the machine, and does not idle after them.
func TestLiveRescaleSeveralRegions(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			const n, k = 200_000, 40
			a, b := newCommitLog(), newCommitLog()
			var job atomic.Pointer[actors.Job]
			var rescaled atomic.Bool
			tickers := func() func(int) {
				sleepers := weir.NewSleepers(200 * time.Microsecond)
				var ticks atomic.Int64
				return func(i int) {
					if rescaled.Load() {
						return
					}
					if ticks.Add(1)%64 == 0 {
						if j := job.Load(); j != nil && j.Rescales().Count >= 3 {
							rescaled.Store(true)
						}
					}
					sleepers[i].Tick()
				}
			}
			g := weir.NewGraph("two")
			stagedKeycountTicked(g, "a-", n, k, 2, 2, tickers(), a.Sink())
			stagedKeycountTicked(g, "b-", n, k, 2, 2, tickers(), b.Sink())
			res, err := weir.Run(context.Background(), g, checkpointsEvery30ms(mode, t.TempDir()), weir.WithRescaleSchedule(
				weir.RescaleStep{After: 25 * time.Millisecond, Parallelism: map[string]int{"a-count": 3}},
				weir.RescaleStep{After: 75 * time.Millisecond, Parallelism: map[string]int{"b-sink": 3}},
				weir.RescaleStep{After: 125 * time.Millisecond, Parallelism: map[string]int{"a-count": 1}},
			), weir.WithJobObserver(func(j *actors.Job) { job.Store(j) }))
			if err != nil {
				t.Fatal(err)
			}
			checkAllCommitted(t, res.Rescales, 3)
			if !rescaled.Load() {
				t.Fatal("the count stages never saw the third rescale committed")
			}
			a.verify(t, n, k)
			b.verify(t, n, k)
		})
	}
}

// TestRestoreStagingSinkAtFewerInstances stops keycount with its two-phase
// sink at 3 instances once a checkpoint committed (its stop checkpoint
// captures what is in flight), and restores the latest checkpoint with the
// sink at 1: instance 0 recovers its own transactions and those of the
// removed instances 1 and 2 (RecoverRemoved, idempotent for what they
// committed already). The output committed by both runs is every key's
// counts once each (in no defined order: verifyUnordered).
func TestRestoreStagingSinkAtFewerInstances(t *testing.T) {
	const n, k = 60_000, 40
	dir := t.TempDir()
	log := newCommitLog()
	g := weir.NewGraph("keycount")
	stagedKeycount(g, "", n, k, 2, 3, 0.05, log)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log.OnFirstCommit(cancel)
	res1, err := weir.Run(ctx, g, checkpointsEvery30ms(weir.CheckpointUnaligned, dir))
	if err != nil {
		t.Fatal(err)
	}
	// On a busy machine the first run may read all its input before its
	// first commit stops it: the restore at fewer sink instances still
	// recovers the removed instances' staged output, and is checked alike.
	t.Logf("first run read %d of %d records before it was stopped", res1.RecordsIn, n)
	g2 := weir.NewGraph("keycount")
	stagedKeycount(g2, "", n, k, 2, 1, 0.05, log)
	res := restoreLatest(t, g2, checkpointsEvery30ms(weir.CheckpointUnaligned, dir))
	t.Logf("restored checkpoint %d with the sink at 1", res.RestoredFrom)
	log.verifyUnordered(t, n, k)
}

// TestLiveRescaleSinkAfterItsProducerShrank shrinks count 2 → 1, then
// grows it back while shrinking the two-phase sink 2 → 1: sink[1]'s input
// from the removed count[1] ended at the first rescale and delivers no
// barrier of the second, so it counts as drained. Before, the removed
// sink[1] waited for that barrier until the rescale timed out (30 s).
// Both rescales commit, and the output is exactly once.
func TestLiveRescaleSinkAfterItsProducerShrank(t *testing.T) {
	t.Parallel()
	const n, k = 100_000, 40
	log := newCommitLog()
	g := weir.NewGraph("keycount")
	stagedKeycount(g, "", n, k, 2, 2, 0.05, log)
	res, err := weir.Run(context.Background(), g, checkpointsEvery30ms(weir.CheckpointAligned, t.TempDir()), weir.WithRescaleSchedule(
		weir.RescaleStep{After: 25 * time.Millisecond, Parallelism: map[string]int{"count": 1}},
		weir.RescaleStep{After: 50 * time.Millisecond, Parallelism: map[string]int{"count": 2, "sink": 1}},
	))
	if err != nil {
		t.Fatal(err)
	}
	checkAllCommitted(t, res.Rescales, 2)
	log.verify(t, n, k)
}

// checkAllCommitted checks that want rescale steps ran and each committed.
func checkAllCommitted(t *testing.T, stats []weir.RescaleStat, want int) {
	t.Helper()
	for _, r := range stats {
		t.Logf("rescale %d: %s took %v %s", r.Step, r.Changes, r.Took, r.Err)
		if r.Err != "" {
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
	}
	if len(stats) != want {
		t.Fatalf("%d rescales, want %d", len(stats), want)
	}
}
