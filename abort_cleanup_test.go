package weir_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
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
	s.mu.Lock()
	if name != "sink/0/state" {
		s.inflight++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inflight--
			s.cond.Broadcast()
			s.mu.Unlock()
		}()
		return s.Local.PutBlob(ctx, job, ckpt, name, data)
	}
	for s.inflight > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
	if _, err := s.Local.PutBlob(ctx, job, ckpt, name, data); err != nil {
		return store.BlobRef{}, err
	}
	return store.BlobRef{}, errors.New("injected: the disk filled up")
}

// TestAbortedCheckpointIsDeleted: a checkpoint aborted because a task could
// not store its state leaves no directory behind, and the job still ends
// exactly once.
func TestAbortedCheckpointIsDeleted(t *testing.T) {
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	local, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	st := &sinkFailsOnce{Local: local}
	st.cond = sync.NewCond(&st.mu)

	const n, k = 60000, 10
	cfg := weir.RunConfig{Checkpoint: weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 10 * time.Millisecond}}
	job := runKeycountToEnd(t, cfg, st, zerolog.New(os.Stderr).Level(zerolog.WarnLevel), out, n, k, nil)
	completed := map[uint64]bool{}
	for _, c := range job.Checkpoints() {
		completed[c.ID] = true
	}
	if completed[2] || !completed[3] {
		t.Fatalf("completed checkpoints %v: want 2 aborted and 3 completed", job.Checkpoints())
	}
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
