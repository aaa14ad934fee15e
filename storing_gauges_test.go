package weir_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// gaugeWatchStore is a Local store that reads its job's storing gauges
// from inside each streamed blob's first write, once the job is known.
type gaugeWatchStore struct {
	*store.Local
	job              atomic.Pointer[actors.Job]
	seen             atomic.Int32 // blobs whose first write read the gauges
	encoding, stored atomic.Int64 // the least value each gauge had then
}

func (s *gaugeWatchStore) PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(io.Writer) error) (store.BlobRef, error) {
	j := s.job.Load()
	if j == nil {
		return s.Local.PutBlobStream(ctx, job, ckpt, name, write)
	}
	return s.Local.PutBlobStream(ctx, job, ckpt, name, func(w io.Writer) error {
		return write(&firstWrite{w: w, at: func() {
			s.seen.Add(1)
			lower(&s.encoding, j.Metrics.SnapshotsEncoding.Load())
			lower(&s.stored, j.Metrics.BlobsStoring.Load())
		}})
	})
}

// lower stores v into m if it is smaller.
func lower(m *atomic.Int64, v int64) {
	for cur := m.Load(); v < cur && !m.CompareAndSwap(cur, v); cur = m.Load() {
	}
}

// firstWrite calls at before its first write to w.
type firstWrite struct {
	w  io.Writer
	at func()
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if f.at != nil {
		f.at()
		f.at = nil
	}
	return f.w.Write(p)
}

// TestStoringGauges: while a task streams its snapshot into the store, the
// job's SnapshotsEncoding and BlobsStoring count it; once the job ended,
// both are back at 0.
func TestStoringGauges(t *testing.T) {
	const n, k = 60000, 20000
	dir := t.TempDir()
	local, err := store.NewLocal(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	st := &gaugeWatchStore{Local: local}
	st.encoding.Store(1 << 62)
	st.stored.Store(1 << 62)
	out := filepath.Join(dir, "out.jsonl")
	cfg := weir.RunConfig{Checkpoint: weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 10 * time.Millisecond}}
	job := runKeycountSeen(t, cfg, st, zerolog.New(os.Stderr).Level(zerolog.ErrorLevel), out, n, k, nil, func(j *actors.Job) { st.job.Store(j) })
	if st.seen.Load() == 0 {
		t.Fatalf("no streamed blob was written once the job was known (%d checkpoints)", len(job.Checkpoints()))
	}
	if e, s := st.encoding.Load(), st.stored.Load(); e < 1 || s < 1 {
		t.Fatalf("while streaming a snapshot: %d encoding, %d storing; want at least 1 each", e, s)
	}
	if e, s := job.Metrics.SnapshotsEncoding.Load(), job.Metrics.BlobsStoring.Load(); e != 0 || s != 0 {
		t.Fatalf("after the job: %d encoding, %d storing; want 0", e, s)
	}
	if err := keycount.VerifyFile(out, n, k); err != nil {
		t.Fatal(err)
	}
}
