package weir_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
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
