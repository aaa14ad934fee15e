//go:build long

package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/testseed"
	"github.com/weirstream/weir/samples/sessions"
)

// TestLiveRescaleSeveralRegionsUnderChaosKills is
// TestLiveRescaleSeveralRegions while chaos kills a random task or channel
// actor every 250 ms: a failure during a rescale, or after its commit before
// a checkpoint taken after it completed, restarts both pipelines from the
// latest checkpoint; later ones restart their own. Each pipeline's
// committed output is exactly once.
func TestLiveRescaleSeveralRegionsUnderChaosKills(t *testing.T) {
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprintf("unaligned/seed=%d", seed), func(t *testing.T) {
			t.Logf("chaos seed %d", seed)
			const n, k = 40_000, 40
			a, b := newCommitLog(), newCommitLog()
			g := weir.NewGraph("two")
			stagedKeycount(g, "a-", n, k, 2, 2, 0.1, a)
			stagedKeycount(g, "b-", n, k, 2, 2, 0.1, b)
			ctx, cancel := chaosDeadline(t)
			defer cancel()
			// Kills rarer than a rescale lasts, so that some commit and
			// failures come after commits.
			res, err := weir.Run(ctx, g, checkpointsEvery30ms(weir.CheckpointUnaligned, t.TempDir()), chaosKills(250*time.Millisecond, seed),
				weir.WithRescaleSchedule(
					weir.RescaleStep{After: 200 * time.Millisecond, Parallelism: map[string]int{"b-sink": 3}},
					weir.RescaleStep{After: 600 * time.Millisecond, Parallelism: map[string]int{"a-count": 3}},
					weir.RescaleStep{After: 1000 * time.Millisecond, Parallelism: map[string]int{"a-count": 1}},
				))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d kills, %d restarts", res.Kills, res.Restarts)
			for _, r := range res.Rescales {
				t.Logf("rescale %d: %s took %v %s", r.Step, r.Changes, r.Took, r.Err)
				if r.Err != "" && !chaosStopped(r.Err) {
					t.Fatalf("rescale %d: %s", r.Step, r.Err)
				}
			}
			a.verify(t, n, k)
			b.verify(t, n, k)
		})
	}
}

// TestSessionWindowsExactlyOnceUnderActorKills: session windows (timers,
// window state, the watermark) under random task and channel kills with
// unaligned checkpoints give exactly the sessions and late clicks of the
// straightforward computation, each once.
func TestSessionWindowsExactlyOnceUnderActorKills(t *testing.T) {
	testseed.Run(t, 2, 1, func(seed uint64) {
		t.Logf("chaos seed %d", seed)
		dir := t.TempDir()
		const n = 60000
		g, cfg := sessionsJob(t, dir, n, 3, 0.02)
		sup := weir.DefaultSupervision()
		sup.MaxRestarts = 1000 // every kill restarts; the test is about what comes out
		sup.ChaosKillEvery, sup.ChaosSeed = 100*time.Millisecond, int64(seed)
		cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: filepath.Join(dir, "state")}
		var logs logbuf.Buffer // the run's log, shown only if the run fails
		defer func() {
			if t.Failed() {
				t.Logf("the run's log:\n%s", logs.String())
			}
		}()
		logger := zerolog.New(&logs).Level(zerolog.DebugLevel).With().Timestamp().Logger()
		res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cc), weir.WithSupervision(sup), weir.WithLogger(logger))
		if err != nil && strings.Contains(err.Error(), "after the final checkpoint") {
			// A kill between the final checkpoint and its commit fails the
			// run by design, keeping the checkpoint: a restore finishes it.
			t.Logf("killed while ending (%v): restoring", err)
			g2, _ := sessionsJob(t, dir, n, 3, 0)
			restoreLatest(t, g2, weir.WithCheckpoints(cc))
			err = nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if res != nil {
			if res.Kills == 0 {
				t.Fatal("no actor was killed")
			}
			t.Logf("%d kills, %d restarts, %d checkpoints", res.Kills, res.Restarts, len(res.Checkpoints))
		}
		if err := sessions.VerifyFiles(cfg.Out, cfg.LateOut, cfg.Seed, n, cfg.Users); err != nil {
			t.Fatal(err)
		}
	})
}
