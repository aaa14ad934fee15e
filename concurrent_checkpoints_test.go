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
	"github.com/weirstream/weir/samples/keycount"
)

// TestConcurrentCheckpointsExactlyOnceUnderActorKills: a backpressured
// keycount with unaligned checkpoints, two of them allowed in flight and
// triggered every millisecond (so the next starts while the previous one is
// still being written), under random task and channel kills: two were in
// flight at once, they completed in the order of their ids, and the output is
// exactly once.
func TestConcurrentCheckpointsExactlyOnceUnderActorKills(t *testing.T) {
	t.Parallel()
	testseed.Run(t, 2, 1, func(seed uint64) {
		t.Logf("chaos seed %d", seed)
		dir := t.TempDir()
		out := filepath.Join(dir, "out.jsonl")
		const n, k = 30000, 20
		build := func(sleepMs float64) *weir.Graph {
			g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: sleepMs})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		sup := weir.DefaultSupervision()
		sup.MaxRestarts = 1000
		sup.ChaosKillEvery, sup.ChaosSeed = 150*time.Millisecond, int64(seed)
		cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Millisecond, MaxConcurrent: 2,
			StateDir: filepath.Join(dir, "state")}
		var logs logbuf.Buffer
		defer func() {
			if t.Failed() {
				t.Logf("the run's log:\n%s", logs.String())
			}
		}()
		logger := zerolog.New(&logs).Level(zerolog.DebugLevel).With().Timestamp().Logger()
		res, err := weir.Run(context.Background(), build(0.02), weir.WithCheckpoints(cc), weir.WithSupervision(sup), weir.WithLogger(logger))
		if err != nil && strings.Contains(err.Error(), "after the final checkpoint") {
			t.Logf("killed while ending (%v): restoring", err)
			restoreLatest(t, build(0), weir.WithCheckpoints(cc))
			err = nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if res != nil {
			t.Logf("%d kills, %d restarts, %d checkpoints, at most %d in flight",
				res.Kills, res.Restarts, len(res.Checkpoints), res.MaxCheckpointsInFlight)
			if res.MaxCheckpointsInFlight != 2 {
				t.Errorf("at most %d checkpoints in flight, want 2", res.MaxCheckpointsInFlight)
			}
			for i := 1; i < len(res.Checkpoints); i++ {
				if a, b := res.Checkpoints[i-1].ID, res.Checkpoints[i].ID; a >= b {
					t.Errorf("checkpoint %d completed after %d", b, a)
				}
			}
		}
		verifyKeycount(t, out, n, k)
	})
}
