package jetstream_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/testseed"
)

// TestLiveRescaleShrinksAndGrowsTheSink rescales the JetStream sink 3 → 1
// → 2 while the job runs, with unaligned checkpoints: the removed
// instances hand their sealed batches and their messages since the last
// checkpoint to instance 0, which publishes the batches under their
// writers' identity. Every count is in OUT exactly once. Before, a
// JetStream sink could not shrink (its uncommitted output was a
// transaction only its instance could commit).
func TestLiveRescaleShrinksAndGrowsTheSink(t *testing.T) {
	const n, keys = 6000, 10
	js, nc := startFilled(t, n, keys)
	res, err := weir.Run(context.Background(), slowCountGraph(nc, 2, 2, 3, true, 500*time.Microsecond),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond,
			StateDir: filepath.Join(t.TempDir(), "state")}),
		weir.WithRuntime(weir.RuntimeOptions{BatchSize: 16, ChannelCapacity: 2}),
		weir.WithRescaleSchedule(
			weir.RescaleStep{After: 200 * time.Millisecond, Parallelism: map[string]int{"sink": 1}},
			weir.RescaleStep{After: 400 * time.Millisecond, Parallelism: map[string]int{"sink": 2}},
		))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rescales) != 2 {
		t.Fatalf("%d rescales, want 2: %+v", len(res.Rescales), res.Rescales)
	}
	for _, r := range res.Rescales {
		t.Logf("rescale %d: %s took %v, %d bytes handed off %s", r.Step, r.Changes, r.Took, r.Bytes, r.Err)
		if r.Err != "" {
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
	}
	if !strings.Contains(res.Rescales[0].Changes, "sink 3→1") || res.Rescales[0].Bytes == 0 {
		t.Fatalf("the shrink %q handed off %d bytes: want the removed instances' staged output", res.Rescales[0].Changes, res.Rescales[0].Bytes)
	}
	checkCounts(t, js, n, keys)
}

// TestRestoreWithFewerSinkInstances stops the count once it has
// checkpoints, with the sink at 3, and restores the last checkpoint with the
// sink at 1: instance 0 publishes, under their writers' identity, the
// batches the removed instances' states hold and deletes what they
// published after it (RecoverRemoved); the rest of the input follows.
// Every count is in OUT exactly once.
func TestRestoreWithFewerSinkInstances(t *testing.T) {
	const n, keys = 4000, 10
	js, nc := startFilled(t, n, keys)
	cc := weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 10 * time.Millisecond,
		StateDir: filepath.Join(t.TempDir(), "state")})
	rt := weir.WithRuntime(weir.RuntimeOptions{BatchSize: 16, ChannelCapacity: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-time.After(300 * time.Millisecond):
			cancel()
		case <-ctx.Done():
		}
	}()
	first, err := weir.Run(ctx, slowCountGraph(nc, 2, 2, 3, true, 500*time.Microsecond), cc, rt)
	cancel()
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	if first.RecordsIn >= n {
		t.Fatalf("the first run read all %d records before it was stopped: the restore proves nothing", first.RecordsIn)
	}
	g := countGraph(nc, 2, 2, 1, true)
	res, err := weir.Run(context.Background(), g, cc, rt, weir.WithRestore("latest"))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Parallelisms()["sink"]; got != 1 {
		t.Fatalf("sink parallelism %d, want 1", got)
	}
	t.Logf("first run read %d records; restored checkpoint %d with the sink at 1", first.RecordsIn, res.RestoredFrom)
	checkCounts(t, js, n, keys)
}

// TestSinkRescalesUnderKillsExactlyOnce rescales the sink between 1, 2
// and 3 instances every 200 ms while actors are killed about every 400 ms: restores then meet states
// holding batches taken over from removed instances (published under
// their writers' identity), and removed instances' states at restores
// with fewer sink instances. Every count is in OUT exactly once.
func TestSinkRescalesUnderKillsExactlyOnce(t *testing.T) {
	const n, keys = 6000, 10
	js, nc := startFilled(t, n, keys)
	sup := weir.DefaultSupervision()
	sup.MaxRestarts, sup.RestartWindow = 1000, time.Minute
	seed, ok := testseed.Replay(t)
	if !ok {
		seed = uint64(time.Now().UnixNano())
	}
	sup.ChaosKillEvery, sup.ChaosSeed = 400*time.Millisecond, int64(seed)
	t.Logf("chaos seed %d (replay with WEIR_SEED=%d)", seed, seed)
	// A kill during a rescale aborts it: eight steps, so that some commit.
	var steps []weir.RescaleStep
	for i, p := range []int{1, 3, 2, 1, 3, 1, 2, 3} {
		steps = append(steps, weir.RescaleStep{After: time.Duration(i+1) * 200 * time.Millisecond, Parallelism: map[string]int{"sink": p}})
	}
	res, err := weir.Run(context.Background(), slowCountGraph(nc, 2, 2, 3, true, 500*time.Microsecond),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond,
			StateDir: filepath.Join(t.TempDir(), "state")}),
		weir.WithRuntime(weir.RuntimeOptions{BatchSize: 16, ChannelCapacity: 2}),
		weir.WithSupervision(sup),
		weir.WithRescaleSchedule(steps...))
	if err != nil {
		t.Fatal(err)
	}
	committed := 0
	for _, r := range res.Rescales {
		t.Logf("rescale %d: %s took %v, %d bytes handed off %s", r.Step, r.Changes, r.Took, r.Bytes, r.Err)
		if r.Err == "" {
			committed++
		}
	}
	t.Logf("kills %d, restarts %d, checkpoints %d, rescales committed %d", res.Kills, res.Restarts, len(res.Checkpoints), committed)
	if res.Restarts == 0 || committed == 0 {
		t.Fatal("no restart or no committed rescale: the test proved nothing")
	}
	checkCounts(t, js, n, keys)
}
