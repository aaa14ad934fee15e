//go:build long

package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// TestLiveRescaleUnderChaosKills rescales keycount 2 → 3 → 1 → 4 with
// checkpoints while chaos kills a random task or channel actor every 60 ms:
// a failure during a rescale aborts it and the job restarts from its latest
// checkpoint (old tables), a failure after a commit restores at the new
// parallelism, and the committed output is exactly once and in order. Each
// step either committed or was aborted by a failure.
func TestLiveRescaleUnderChaosKills(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		for _, seed := range []int64{1, 2} {
			t.Run(fmt.Sprintf("%s/seed=%d", mode, seed), func(t *testing.T) {
				t.Logf("chaos seed %d", seed)
				const n, k = 80_000, 40
				dir := t.TempDir()
				out := filepath.Join(dir, "out.jsonl")
				g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.05})
				if err != nil {
					t.Fatal(err)
				}
				sup := weir.DefaultSupervision()
				sup.MaxRestarts, sup.RestartWindow = 1000, time.Minute
				sup.ChaosKillEvery, sup.ChaosSeed = 60*time.Millisecond, seed
				res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{Mode: mode, Interval: 30 * time.Millisecond, Timeout: 30 * time.Second, Retain: 2,
					StateDir: filepath.Join(dir, "state")}),
					weir.WithSupervision(sup),
					countTo3To1To4(100*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				committed := 0
				for _, r := range res.Rescales {
					t.Logf("rescale %d: %s %s", r.Step, r.Changes, r.Err)
					switch {
					case r.Err == "":
						committed++
					case !strings.Contains(r.Err, "aborted") && !strings.Contains(r.Err, "restarting"):
						t.Fatalf("rescale %d: %s", r.Step, r.Err)
					}
				}
				t.Logf("%d kills, %d restarts, %d of %d rescales committed", res.Kills, res.Restarts, committed, len(res.Rescales))
				verifyKeycount(t, out, n, k)
			})
		}
	}
}

// TestLiveRescaleStagingSinkUnderChaosKills is TestLiveRescaleStagingSink
// while chaos kills a random task or channel actor every 150 ms: a failure
// during a rescale (before or after a removed instance handed its staged
// output off, before the instance that took it over is done) restores the
// old sink parallelism from the latest checkpoint, one after a commit
// restores that checkpoint at the new one (each old instance that remains
// recovers its own transactions and those of the removed instances it
// takes over, the added ones start empty); the committed output is
// exactly once either way (verifyUnordered: a restore replays the channel
// state of removed instances' inputs to the remaining ones).
func TestLiveRescaleStagingSinkUnderChaosKills(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		for _, seed := range []int64{1, 2} {
			t.Run(fmt.Sprintf("%s/seed=%d", mode, seed), func(t *testing.T) {
				t.Logf("chaos seed %d", seed)
				const n, k = 60_000, 40
				log := newCommitLog()
				g := weir.NewGraph("keycount")
				stagedKeycount(g, "", n, k, 2, 2, 0.05, log)
				ctx, cancel := chaosDeadline(t)
				defer cancel()
				res, err := weir.Run(ctx, g, checkpointsEvery30ms(mode, t.TempDir()), chaosKills(150*time.Millisecond, seed),
					weir.WithRescaleSchedule(stretched(stagingSinkSteps, 8)...))
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d kills, %d restarts", res.Kills, res.Restarts)
				checkStagingSinkSteps(t, res.Rescales, true)
				log.verifyUnordered(t, n, k)
			})
		}
	}
}

// stretched is steps with their times multiplied by f: under chaos, a
// region restart after a kill takes longer than the steps' usual gaps.
func stretched(steps []weir.RescaleStep, f time.Duration) []weir.RescaleStep {
	out := make([]weir.RescaleStep, len(steps))
	for i, st := range steps {
		out[i] = weir.RescaleStep{After: st.After * f, Parallelism: st.Parallelism}
	}
	return out
}
