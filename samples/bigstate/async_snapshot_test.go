package bigstate

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/store"
)

// TestAsyncSnapshotsKeepTheBarrierState: a few hot keys whose values the
// operator changes in place with every record, checkpoints every few
// milliseconds encoded off the task while it keeps changing them; a rerun
// restored from checkpoints late, in the middle and early in the run
// continues every value exactly where its checkpoint left it (each digest
// checks the whole value), in aligned and unaligned mode.
func TestAsyncSnapshotsKeepTheBarrierState(t *testing.T) {
	t.Parallel()
	const n, k, vb = 40000, 16, 4096
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
			g, err := Build(Config{Records: n, Keys: k, ValueBytes: vb, Parallelism: 2, Out: out, SleepMs: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			cp := weir.CheckpointConfig{Mode: mode, Interval: 5 * time.Millisecond, Retain: 100000, StateDir: stateDir}
			if _, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cp)); err != nil {
				t.Fatal(err)
			}
			if err := VerifyFile(out, n, k, vb); err != nil {
				t.Fatal(err)
			}
			ids := storedCheckpoints(t, stateDir, 3)
			// Newest first: a restore deletes the checkpoints after its own.
			for _, id := range slices.Compact([]uint64{ids[len(ids)-2], ids[len(ids)/2], ids[0]}) {
				g, err := Build(Config{Records: n, Keys: k, ValueBytes: vb, Parallelism: 2, Out: out})
				if err != nil {
					t.Fatal(err)
				}
				res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cp), weir.WithRestore(strconv.FormatUint(id, 10)))
				if err != nil {
					t.Fatalf("restore %d: %v", id, err)
				}
				if res.RestoredFrom != id {
					t.Fatalf("restored from %d, want %d", res.RestoredFrom, id)
				}
				if err := VerifyFile(out, n, k, vb); err != nil {
					t.Fatalf("after restoring checkpoint %d of %v: %v", id, ids, err)
				}
			}
		})
	}
}

// TestAsyncSnapshotsUnderChaos: tasks killed at random while asynchronous
// snapshots of hot keys are taken; the output stays exactly once.
func TestAsyncSnapshotsUnderChaos(t *testing.T) {
	t.Parallel()
	const n, k, vb = 30000, 16, 2048
	for _, seed := range []int64{3, 11} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("chaos seed %d", seed)
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			g, err := Build(Config{Records: n, Keys: k, ValueBytes: vb, Parallelism: 2, Out: out, SleepMs: 0.02})
			if err != nil {
				t.Fatal(err)
			}
			cp := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 5 * time.Millisecond, StateDir: filepath.Join(dir, "state")}
			sup := weir.DefaultSupervision()
			sup.MaxRestarts, sup.ChaosKillEvery, sup.ChaosSeed = 1000, 60*time.Millisecond, seed
			res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cp), weir.WithSupervision(sup))
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyFile(out, n, k, vb); err != nil {
				t.Fatalf("after %d restarts: %v", res.Restarts, err)
			}
		})
	}
}

// storedCheckpoints lists the committed checkpoints of bigstate under
// stateDir and fails unless it holds at least least of them.
func storedCheckpoints(t *testing.T, stateDir string, least int) []uint64 {
	t.Helper()
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids, err := st.List(context.Background(), "bigstate")
	if err != nil || len(ids) < least {
		t.Fatalf("checkpoints %v, %v: want at least %d", ids, err, least)
	}
	return ids
}
