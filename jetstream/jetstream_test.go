package jetstream_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
)

// TestRoundTripExactlyOnceUnderKills reads a stream by four subject splits,
// counts per key and writes the counts to another stream while actors are
// killed (one about every 250 ms, after a checkpoint completed since the
// last kill): each regional restore rewinds the source to
// its checkpoint's sequences and the sink re-publishes only what the stream
// lacks, so the output holds every count exactly once.
func TestRoundTripExactlyOnceUnderKills(t *testing.T) {
	const n, keys = 10000, 20
	js, nc := startFilled(t, n, keys)

	sup := weir.DefaultSupervision()
	sup.MaxRestarts, sup.RestartWindow = 1000, time.Minute
	sup.ChaosKillEvery, sup.ChaosSeed = 250*time.Millisecond, 7
	t.Logf("chaos seed %d", sup.ChaosSeed)
	// The count works 0.2 ms a record (about a second of input): without
	// the race detector the job ended in 0.5 s, before the first kill.
	res, err := weir.Run(context.Background(), slowCountGraph(nc, 2, 2, 2, true, 200*time.Microsecond),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond,
			StateDir: filepath.Join(t.TempDir(), "state")}),
		weir.WithRuntime(weir.RuntimeOptions{BatchSize: 64}),
		weir.WithSupervision(sup))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kills %d, restarts %d, checkpoints %d", res.Kills, res.Restarts, len(res.Checkpoints))
	if res.Restarts == 0 {
		t.Fatal("no restart happened: the test proved nothing")
	}
	checkCounts(t, js, n, keys)
}

// TestRestoreAtAnotherParallelism runs the count over a first part of the
// stream at parallelism 2, appends more messages and restores the job from
// its last checkpoint with source and count at 3: the source resumes each
// subject split after the checkpoint's sequence, the counts continue, and the
// output holds every count exactly once.
func TestRestoreAtAnotherParallelism(t *testing.T) {
	const first, n, keys = 6000, 10000, 10
	js, nc := startFilled(t, first, keys)
	cc := weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 20 * time.Millisecond,
		StateDir: filepath.Join(t.TempDir(), "state")})
	if _, err := weir.Run(context.Background(), countGraph(nc, 2, 2, 2, true), cc); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, js, first, keys)
	fill(t, js, first, n, keys)
	g := countGraph(nc, 3, 3, 2, true)
	res, err := weir.Run(context.Background(), g, cc, weir.WithRestore("latest"))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Parallelisms()["source"]; got != 3 {
		t.Fatalf("source parallelism %d, want 3", got)
	}
	t.Logf("restored run: %d records in", res.RecordsIn)
	if res.RecordsIn < n-first {
		t.Fatalf("restored run read %d records, want at least the %d new ones", res.RecordsIn, n-first)
	}
	checkCounts(t, js, n, keys)
}

// TestRestoreOlderCheckpointRetractsNewerOutput runs the count to its end,
// keeping every checkpoint, then restores it from a checkpoint in the middle
// of the run that later checkpoints published output after: the sink deletes
// that output and the replay publishes it again, so the output holds every
// count exactly once (the replay's message ids differ from the deleted
// ones, so JetStream's de-duplication plays no part).
func TestRestoreOlderCheckpointRetractsNewerOutput(t *testing.T) {
	const n, keys = 4000, 10
	js, nc := startFilled(t, n, keys)
	stateDir := filepath.Join(t.TempDir(), "state")
	cc := weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 10 * time.Millisecond,
		Retain: 1000, StateDir: stateDir})
	// Small buffers keep the source close to the slow count, so the
	// checkpoints cut the input along the way.
	rt := weir.WithRuntime(weir.RuntimeOptions{BatchSize: 16, ChannelCapacity: 2})
	if _, err := weir.Run(context.Background(), slowCountGraph(nc, 2, 2, 2, true, 500*time.Microsecond), cc, rt); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, js, n, keys)
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := st.List(context.Background(), "jscount")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	later := publishedAfter(t, js)
	restore := uint64(0)
	for _, id := range ids[:len(ids)-1] {
		if later(id) > 0 && (restore == 0 || id <= ids[len(ids)/2]) {
			restore = id
		}
	}
	if restore == 0 {
		t.Fatalf("checkpoints %v: no checkpoint with output published after it", ids)
	}
	t.Logf("checkpoints %v: restoring %d, after which %d messages were published", ids, restore, later(restore))
	if _, err := weir.Run(context.Background(), countGraph(nc, 2, 2, 2, true), cc, rt, weir.WithRestore(fmt.Sprint(restore))); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, js, n, keys)
}

// TestUnboundedFollowsNewMessages: an unbounded source keeps reading what is
// published while the job runs; the job, stopped through its context, has
// committed every count exactly once.
func TestUnboundedFollowsNewMessages(t *testing.T) {
	const half, keys = 1000, 10
	js, nc := startFilled(t, half, keys)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, countGraph(nc, 2, 2, 2, false), weir.WithCheckpoints(weir.CheckpointConfig{
			Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: filepath.Join(t.TempDir(), "state")}))
		done <- err
	}()
	outHolds := func(n uint64) func() bool {
		return func() bool {
			s, err := js.Stream(apiCtx(t), "OUT")
			if err != nil {
				return false
			}
			info, err := s.Info(apiCtx(t))
			return err == nil && info.State.Msgs >= n
		}
	}
	if !poll.Until(time.Minute, 10*time.Millisecond, outHolds(half)) {
		t.Fatal("the first half was not committed within a minute")
	}
	fill(t, js, half, 2*half, keys)
	if !poll.Until(time.Minute, 10*time.Millisecond, outHolds(2*half)) {
		t.Fatal("messages published while the job ran were not committed within a minute")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stopped run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stopped run did not end within a minute")
	}
	checkCounts(t, js, 2*half, keys)
}
