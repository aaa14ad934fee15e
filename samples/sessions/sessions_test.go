package sessions

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/weirstream/weir"
)

// TestSessionsMatchStraightforwardComputation: an undisturbed run's sessions
// and late clicks equal the independent computation's.
func TestSessionsMatchStraightforwardComputation(t *testing.T) {
	dir := t.TempDir()
	const n, seed = 30000, 7
	cfg := Config{Records: n, Users: 20, Parallelism: 3, Seed: seed,
		Out: filepath.Join(dir, "sessions.jsonl"), LateOut: filepath.Join(dir, "late.jsonl")}
	g, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if LateCount(n) == 0 || len(Expected(seed, n, 20)) < 100 {
		t.Fatalf("the input has %d late clicks and %d sessions: too few to test", LateCount(n), len(Expected(seed, n, 20)))
	}
	if err := VerifyFiles(cfg.Out, cfg.LateOut, seed, n, 20); err != nil {
		t.Fatal(err)
	}
}
