package weir_test

import (
	"context"
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

// sessionsJob is the sessions sample writing into dir.
func sessionsJob(t *testing.T, dir string, n int64, p int, sleepMs float64) (*weir.Graph, sessions.Config) {
	t.Helper()
	cfg := sessions.Config{Records: n, Users: 20, Parallelism: p, Seed: 11, SleepMs: sleepMs,
		Out: filepath.Join(dir, "sessions.jsonl"), LateOut: filepath.Join(dir, "late.jsonl")}
	g, err := sessions.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, cfg
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

// TestSessionWindowsRestoreAtAnotherParallelism: a run stopped part way
// restores at another parallelism of the session operator; timers, windows
// and watermarks move with their key groups and the output is exactly once.
func TestSessionWindowsRestoreAtAnotherParallelism(t *testing.T) {
	dir := t.TempDir()
	const n = 60000
	stateDir := filepath.Join(dir, "state")
	cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: stateDir}
	g, cfg := sessionsJob(t, dir, n, 3, 0.02)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	res, err := weir.Run(ctx, g, weir.WithCheckpoints(cc))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checkpoints) == 0 {
		t.Fatal("no checkpoint before the stop")
	}
	g2, _ := sessionsJob(t, dir, n, 2, 0)
	restoreLatest(t, g2, weir.WithCheckpoints(cc))
	if err := sessions.VerifyFiles(cfg.Out, cfg.LateOut, cfg.Seed, n, cfg.Users); err != nil {
		t.Fatal(err)
	}
}
