package weir_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
)

// TestStopDoesNotDrainAndRestoreContinues stops a slow keycount through its
// context once a checkpoint is committed. The run must end without working
// through its input (a stop checkpoint captures what is in flight instead of
// draining it), and a run restored from the latest checkpoint must then
// complete the output exactly once. Before, a cancelled run drained its whole
// input.
func TestStopDoesNotDrainAndRestoreContinues(t *testing.T) {
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) { stopAndRestore(t, mode, false) })
	}
}

// TestDrainOnCancelProcessesWhatWasRead: with WithDrain a cancelled run ends
// its sources and processes every record it read, to a final aligned
// checkpoint; a restore from it reads the rest, exactly once.
func TestDrainOnCancelProcessesWhatWasRead(t *testing.T) {
	stopAndRestore(t, weir.CheckpointUnaligned, true)
}

func stopAndRestore(t *testing.T, mode weir.CheckpointMode, drain bool) {
	const n, k = 40000, 20
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	build := func() *weir.Graph {
		g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	cc := weir.CheckpointConfig{Mode: mode, Interval: 20 * time.Millisecond, StateDir: stateDir}
	// Deep channels: a backpressured run holds some 16,000 records in flight,
	// which draining would have to work through at 0.2 ms each.
	rt := weir.WithRuntime(weir.RuntimeOptions{BatchSize: 64, ChannelCapacity: 64})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res *weir.Result
		err error
	}
	done := make(chan outcome, 1)
	opts := []weir.RunOption{weir.WithCheckpoints(cc), rt}
	if drain {
		opts = append(opts, weir.WithDrain())
	}
	go func() {
		res, err := weir.Run(ctx, build(), opts...)
		done <- outcome{res, err}
	}()
	if !poll.Until(time.Minute, 5*time.Millisecond, func() bool { return committed(stateDir) }) {
		t.Fatal("no checkpoint committed within a minute")
	}
	cancel()
	var first outcome
	select {
	case first = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the stopped run did not end")
	}
	if first.err != nil {
		t.Fatalf("stopped run: %v", first.err)
	}
	// Draining processes every record read; a stop leaves what is in flight
	// to the stop checkpoint.
	cks := first.res.Checkpoints
	left := first.res.RecordsIn - first.res.RecordsOut
	switch {
	case drain && (left != 0 || !cks[len(cks)-1].Final):
		t.Fatalf("drained run read %d records and processed %d, last checkpoint %+v; want all processed, final",
			first.res.RecordsIn, first.res.RecordsOut, cks[len(cks)-1])
	case !drain && left < 2000:
		t.Fatalf("stopped run read %d records and processed %d: it drained its backlog instead of stopping",
			first.res.RecordsIn, first.res.RecordsOut)
	}
	t.Logf("stopped after %d records in, %d out, %d checkpoints, last %+v", first.res.RecordsIn, first.res.RecordsOut, len(cks), cks[len(cks)-1])

	restoreLatest(t, build(), weir.WithCheckpoints(cc), rt)
	verifyKeycount(t, out, n, k) // the stopped run's output and the restored run's
}
