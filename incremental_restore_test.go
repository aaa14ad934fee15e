package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// TestIncrementalRestoreOlderCheckpointAtNewParallelism runs keycount with
// incremental checkpoints and --retain 3 until retention has subsumed
// checkpoints whose blobs retained ones still read, stops it, and restores
// the older of the retained checkpoints whose key-group chains read a
// subsumed checkpoint's sections, at another parallelism: the output must
// be exactly once.
func TestIncrementalRestoreOlderCheckpointAtNewParallelism(t *testing.T) {
	const n, k = 40000, 400
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	build := func(p int) *weir.Graph {
		g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: p, Out: out, SleepMs: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: stateDir, Retain: 3, Incremental: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu  sync.Mutex
		job *actors.Job
	)
	done := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, build(2), weir.WithCheckpoints(cc),
			weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); job = j; mu.Unlock() }))
		done <- err
	}()
	if !poll.Until(2*time.Minute, 5*time.Millisecond, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return job != nil && len(job.Checkpoints()) >= 10
	}) {
		t.Fatal("10 checkpoints did not complete within 2 minutes")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopped run: %v", err)
	}

	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := st.List(context.Background(), "keycount")
	if err != nil {
		t.Fatal(err)
	}
	var older uint64
	for _, id := range listed[:len(listed)-1] {
		m, err := st.Manifest(context.Background(), "keycount", id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range store.ReferencedCheckpoints(m) {
			if !slices.Contains(listed, r) {
				older = id
			}
		}
	}
	st.Close()
	if older == 0 {
		t.Fatalf("no retained checkpoint but the newest of %v reads a subsumed checkpoint's sections", listed)
	}
	t.Logf("retained %v; restoring %d at parallelism 3", listed, older)
	res, err := weir.Run(context.Background(), build(3), weir.WithCheckpoints(cc), weir.WithRestore(fmt.Sprint(older)))
	if err != nil {
		t.Fatalf("restore %d: %v", older, err)
	}
	if res.RestoredFrom != older {
		t.Fatalf("restored from %d, want %d", res.RestoredFrom, older)
	}
	verifyKeycount(t, out, n, k)
}
