package weir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/natstest"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// setupStore is a checkpoint store for job "j" with checkpoints made by hand.
type setupStore struct {
	t  *testing.T
	st store.Store
	// flip flips a byte of stored blob (or "_manifest") name of checkpoint id.
	flip func(id uint64, name string)
}

// newSetupStore is a state directory (a Local store).
func newSetupStore(t *testing.T) *setupStore {
	dir := t.TempDir()
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &setupStore{t: t, st: st}
	s.flip = func(id uint64, name string) {
		p := filepath.Join(dir, "j", fmt.Sprintf("chk-%020d", id), filepath.FromSlash(name))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 0x01
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// newJetStreamSetupStore is a JetStream store on an embedded nats-server.
func newJetStreamSetupStore(t *testing.T) *setupStore {
	js := natstest.Start(t, natstest.Options{JetStream: true}).JetStream(t)
	st, err := store.NewJetStream(js, store.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &setupStore{t: t, st: st}
	s.flip = func(id uint64, name string) {
		obs, err := js.ObjectStore(s.ctx(), store.BucketName("j"))
		if err != nil {
			t.Fatal(err)
		}
		object := fmt.Sprintf("chk-%020d/%s", id, name)
		b, err := obs.GetBytes(s.ctx(), object)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 0x01
		if _, err := obs.PutBytes(s.ctx(), object, b); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *setupStore) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	s.t.Cleanup(cancel)
	return ctx
}

// blob writes task count[0]'s state blob of checkpoint id (key group 7).
func (s *setupStore) blob(id uint64) store.BlobRef {
	ref, err := s.st.PutBlob(s.ctx(), "j", id, "count/0/state", []byte(fmt.Sprintf("state of checkpoint %d", id)))
	if err != nil {
		s.t.Fatal(err)
	}
	return ref
}

// commit writes a complete checkpoint id.
func (s *setupStore) commit(id uint64) {
	m := &store.Manifest{Job: "j", CheckpointID: id, Fingerprint: setupPlan().Fingerprint(), MaxParallelism: 8,
		Parallelism: map[string]int{"count": 1}, KeyGroups: map[string][]int32{"count": make([]int32, 8)},
		Tasks: []store.TaskSnapshot{{Operator: "count", Instance: 0, SourceOffset: -1, KeyGroups: map[int]store.BlobRef{7: s.blob(id)}}},
		Mode:  "aligned"}
	if err := s.st.CommitManifest(s.ctx(), m); err != nil {
		s.t.Fatal(err)
	}
}

// setupPlan is the job the hand-made checkpoints belong to.
func setupPlan() *plan.Job { return &plan.Job{Name: "j", MaxParallelism: 8} }

// setup runs withStore for restore and returns the options and the log.
func (s *setupStore) setup(restore string) (actors.CheckpointOptions, string, error) {
	return s.setupFor(setupPlan(), restore)
}

func (s *setupStore) setupFor(p *plan.Job, restore string) (actors.CheckpointOptions, string, error) {
	return s.setupOwned(p, restore, false)
}

// setupOwned runs withStore as the store's one writer (owns) or not.
func (s *setupStore) setupOwned(p *plan.Job, restore string, owns bool) (actors.CheckpointOptions, string, error) {
	var log bytes.Buffer
	co, err := withStore(s.ctx(), p, actors.CheckpointOptions{}, RunConfig{Restore: restore, OwnsStore: owns, Logger: zerolog.New(&log)}, s.st)
	return co, log.String(), err
}

func (s *setupStore) wantList(want ...uint64) {
	s.t.Helper()
	got, err := s.st.List(s.ctx(), "j")
	if err != nil || !slices.Equal(got, want) {
		s.t.Fatalf("checkpoints %v (%v), want %v", got, err, want)
	}
	if left, err := s.st.(store.UncommittedLister).Uncommitted(s.ctx(), "j"); err != nil || len(left) != 0 {
		s.t.Fatalf("checkpoints without a valid manifest left: %v (%v)", left, err)
	}
}

// logLine returns the log line with checkpoint id and msg, or fails.
func logLine(t *testing.T, log string, id uint64, msg string) string {
	t.Helper()
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, fmt.Sprintf(`"checkpoint":%d,`, id)) && strings.Contains(l, msg) {
			return l
		}
	}
	t.Fatalf("no log line for checkpoint %d saying %q in:\n%s", id, msg, log)
	return ""
}

// TestFreshStartSweepsCheckpointsWithoutValidManifest: a fresh run deletes
// what a killed run left behind (blobs without a manifest, a corrupt
// manifest), keeps every valid checkpoint and numbers its own after all.
func TestFreshStartSweepsCheckpointsWithoutValidManifest(t *testing.T) {
	s := newSetupStore(t)
	s.commit(2)
	s.blob(3) // aborted
	s.commit(4)
	s.flip(4, "_manifest")
	s.commit(5)
	s.blob(6) // in flight when the run was killed
	co, log, err := s.setup("")
	if err != nil {
		t.Fatal(err)
	}
	if co.FirstID != 7 || co.Restore != nil {
		t.Fatalf("FirstID %d, Restore %v; want 7 and none", co.FirstID, co.Restore)
	}
	s.wantList(2, 5)
	if l := logLine(t, log, 4, "deleted a checkpoint whose manifest fails verification"); !strings.Contains(l, `"level":"warn"`) || !strings.Contains(l, "corrupt") {
		t.Fatalf("the corrupt manifest's deletion is not a warning with the cause: %s", l)
	}
	if !strings.Contains(log, `"checkpoints":[3,6]`) {
		t.Fatalf("no log of the incomplete checkpoints deleted:\n%s", log)
	}
}

// TestOwnedJetStreamStoreIsSwept: a shared store (a cluster job's JetStream
// bucket) is swept of checkpoints that never completed only by its owner, the
// coordinator holding the job's lease; any other caller leaves them.
func TestOwnedJetStreamStoreIsSwept(t *testing.T) {
	s := newJetStreamSetupStore(t)
	s.commit(2)
	s.blob(3) // aborted, or interrupted by the coordinator's death
	if _, _, err := s.setupOwned(setupPlan(), "", false); err != nil {
		t.Fatal(err)
	}
	left, err := s.st.(store.UncommittedLister).Uncommitted(s.ctx(), "j")
	if err != nil || !slices.Equal(left, []uint64{3}) {
		t.Fatalf("a caller that does not own the store left %v (%v), want [3] untouched", left, err)
	}
	co, log, err := s.setupOwned(setupPlan(), "latest", true)
	if err != nil {
		t.Fatal(err)
	}
	if co.Restore == nil || co.Restore.CheckpointID != 2 || co.FirstID != 4 {
		t.Fatalf("owner restored %v with FirstID %d; want 2 and 4", co.Restore, co.FirstID)
	}
	s.wantList(2)
	if !strings.Contains(log, `"checkpoints":[3]`) {
		t.Fatalf("no log of the incomplete checkpoint deleted:\n%s", log)
	}
}

// TestRestoreOlderDeletesNewerAndContinuesAfterAll: restoring checkpoint 3
// of 2, 3, 5 (and 6 never completed) deletes 5 with a warning and numbers
// new checkpoints from 7.
func TestRestoreOlderDeletesNewerAndContinuesAfterAll(t *testing.T) {
	s := newSetupStore(t)
	s.commit(2)
	s.commit(3)
	s.commit(5)
	s.blob(6)
	co, log, err := s.setup("3")
	if err != nil {
		t.Fatal(err)
	}
	if co.Restore == nil || co.Restore.CheckpointID != 3 || co.FirstID != 7 {
		t.Fatalf("restore %v, FirstID %d; want checkpoint 3 and 7", co.Restore, co.FirstID)
	}
	s.wantList(2, 3)
	logLine(t, log, 5, "deleting a checkpoint newer than the restored one")
}

// TestRestoreOfAnotherGraphDeletesNothing: a checkpoint that cannot be
// restored into the job (here: a graph with another number of key groups) is refused
// before any newer checkpoint is deleted.
func TestRestoreOfAnotherGraphDeletesNothing(t *testing.T) {
	s := newSetupStore(t)
	s.commit(2)
	s.commit(3)
	_, _, err := s.setupFor(&plan.Job{Name: "j", MaxParallelism: 16}, "2")
	if err == nil || !strings.Contains(err.Error(), "checkpoint 2 was taken from a different graph") {
		t.Fatalf("restore into another graph: %v", err)
	}
	s.wantList(2, 3)
}

// TestRestoreLatestSkipsBrokenCheckpoints: latest is the newest checkpoint
// whose manifest and blobs verify, each newer one skipped with a warning;
// restoring a broken one by id is an error that names it. The same holds for
// a state directory and for the JetStream store; only a state directory is
// swept of the corrupt manifest.
func TestRestoreLatestSkipsBrokenCheckpoints(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		s := newSetupStore(t)
		restoreLatestSkipsBroken(t, s)
		s.wantList(2)
	})
	t.Run("jetstream", func(t *testing.T) {
		s := newJetStreamSetupStore(t)
		restoreLatestSkipsBroken(t, s)
		if got, err := s.st.List(s.ctx(), "j"); !slices.Equal(got, []uint64{2}) {
			t.Fatalf("checkpoints %v (%v), want [2]: 3 deleted, 4 skipped as corrupt", got, err)
		}
	})
}

func restoreLatestSkipsBroken(t *testing.T, s *setupStore) {
	s.commit(2)
	s.commit(3)
	s.flip(3, "count/0/state")
	s.commit(4)
	s.flip(4, "_manifest")

	_, _, err := s.setup("3")
	for _, w := range []string{"checkpoint 3", "task count[0]", "key group 7", "crc32c"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("restore 3 (a flipped blob): %v, want an error naming %q", err, w)
		}
	}
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("restore 3: %v does not wrap ErrCorrupt", err)
	}
	_, _, err = s.setup("4")
	if err == nil || !strings.Contains(err.Error(), "checkpoint 4") || !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("restore 4 (a flipped manifest): %v, want a corruption error naming it", err)
	}

	co, log, err := s.setup("latest")
	if err != nil {
		t.Fatal(err)
	}
	if co.Restore.CheckpointID != 2 || co.FirstID != 5 {
		t.Fatalf("latest restored %d with FirstID %d; want 2 and 5", co.Restore.CheckpointID, co.FirstID)
	}
	logLine(t, log, 3, "skipping a checkpoint for restore latest")
	logLine(t, log, 4, "skipping a checkpoint for restore latest")
}

// TestRestoreLatestWithNothingIntact fails naming how many were skipped and
// why the newest was refused (wrapping ErrCorrupt).
func TestRestoreLatestWithNothingIntact(t *testing.T) {
	s := newSetupStore(t)
	s.commit(1)
	s.flip(1, "count/0/state")
	_, log, err := s.setup("latest")
	if err == nil || !strings.Contains(err.Error(), "no intact checkpoint (1 failed verification") || !errors.Is(err, store.ErrCorrupt) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("latest with only a broken checkpoint: %v", err)
	}
	logLine(t, log, 1, "skipping a checkpoint for restore latest")
}

// TestOpenStateDirWritesDirectly: CheckpointConfig.DirectWrites reaches the
// state directory's store, and without it blobs go through the page cache.
func TestOpenStateDirWritesDirectly(t *testing.T) {
	for _, direct := range []bool{false, true} {
		st, done, err := openStateDir(RunConfig{Checkpoint: CheckpointConfig{Mode: CheckpointUnaligned, StateDir: t.TempDir(), DirectWrites: direct}})
		if err != nil {
			t.Fatal(err)
		}
		l, ok := st.(*store.Local)
		if !ok || l.WritesDirectly() != direct {
			t.Errorf("DirectWrites %v: store %T writes directly: %v", direct, st, ok && l.WritesDirectly())
		}
		done()
	}
}
