package weir_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// sinkFailsOnce is a Local store on which the file sink's blob of checkpoint
// 2 fails to store, after its bytes are written and every other blob of that
// checkpoint in flight has been stored: checkpoint 2 is then aborted with
// blobs on disk and no other write for it still to come.
type sinkFailsOnce struct {
	*store.Local
	mu       sync.Mutex
	cond     *sync.Cond
	inflight int // PutBlob calls of checkpoint 2 under way, other than the sink's
}

func (s *sinkFailsOnce) PutBlob(ctx context.Context, job string, ckpt uint64, name string, data []byte) (store.BlobRef, error) {
	if ckpt != 2 {
		return s.Local.PutBlob(ctx, job, ckpt, name, data)
	}
	if name != "sink/0/state" {
		return s.other(func() (store.BlobRef, error) { return s.Local.PutBlob(ctx, job, ckpt, name, data) })
	}
	s.mu.Lock()
	for s.inflight > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
	if _, err := s.Local.PutBlob(ctx, job, ckpt, name, data); err != nil {
		return store.BlobRef{}, err
	}
	return store.BlobRef{}, errors.New("injected: the disk filled up")
}

// PutBlobStream stores a streamed blob (a keyed task's) as PutBlob stores
// any blob but the sink's.
func (s *sinkFailsOnce) PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(io.Writer) error) (store.BlobRef, error) {
	put := func() (store.BlobRef, error) { return s.Local.PutBlobStream(ctx, job, ckpt, name, write) }
	if ckpt != 2 {
		return put()
	}
	return s.other(put)
}

// other stores a blob of checkpoint 2 other than the sink's, counted in
// inflight while it is stored.
func (s *sinkFailsOnce) other(put func() (store.BlobRef, error)) (store.BlobRef, error) {
	s.mu.Lock()
	s.inflight++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	return put()
}

// TestAbortedCheckpointIsDeleted: a checkpoint aborted because a task could
// not store its state leaves no directory behind, and the job still ends
// exactly once.
func TestAbortedCheckpointIsDeleted(t *testing.T) {
	const n, k = 60000, 10
	out, stateDir, _ := runKeycountAbortingTwo(t, n, k, func(local *store.Local) store.Store {
		st := &sinkFailsOnce{Local: local}
		st.cond = sync.NewCond(&st.mu)
		return st
	})
	chk2 := filepath.Join(stateDir, "keycount", fmt.Sprintf("chk-%020d", 2))
	if !poll.Until(30*time.Second, 10*time.Millisecond, func() bool {
		_, err := os.Stat(chk2)
		return errors.Is(err, os.ErrNotExist)
	}) {
		entries, _ := os.ReadDir(chk2)
		t.Fatalf("the aborted checkpoint's directory is still there with %d entries", len(entries))
	}
	if err := keycount.VerifyFile(out, n, k); err != nil {
		t.Fatal(err)
	}
}

// runKeycountAbortingTwo runs keycount (n records, k keys) to its end with
// aligned checkpoints every 10 ms, into a local store in a temporary
// directory as wrap wraps it, and fails the test unless checkpoint 2 was
// aborted and checkpoint 3 completed. It returns the output file, the
// store's directory and the job.
func runKeycountAbortingTwo(t *testing.T, n int64, k int, wrap func(*store.Local) store.Store) (out, stateDir string, job *actors.Job) {
	t.Helper()
	dir := t.TempDir()
	out, stateDir = filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	local, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	cfg := weir.RunConfig{Checkpoint: weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 10 * time.Millisecond}}
	job = runKeycountToEnd(t, cfg, wrap(local), zerolog.New(os.Stderr).Level(zerolog.ErrorLevel), out, n, k, nil)
	completed := map[uint64]bool{}
	for _, c := range job.Checkpoints() {
		completed[c.ID] = true
	}
	if completed[2] || !completed[3] {
		t.Fatalf("completed checkpoints %v: want 2 aborted and 3 completed", job.Checkpoints())
	}
	return out, stateDir, job
}
