package weir_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// diskFillsMidStream is a Local store on which the disk fills up in the
// middle of the first streamed blob of checkpoint 2, 4 KiB into it.
type diskFillsMidStream struct {
	*store.Local
	streamed atomic.Int32           // streamed blobs stored or attempted
	failed   atomic.Bool            // the fault fired
	name     atomic.Pointer[string] // the blob it fired on, once it did
}

func (s *diskFillsMidStream) PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(io.Writer) error) (store.BlobRef, error) {
	s.streamed.Add(1)
	if ckpt != 2 || !s.failed.CompareAndSwap(false, true) {
		return s.Local.PutBlobStream(ctx, job, ckpt, name, write)
	}
	s.name.Store(&name)
	return s.Local.PutBlobStream(ctx, job, ckpt, name, func(w io.Writer) error {
		return write(&fillingWriter{w: w, left: 4096})
	})
}

// fillingWriter is a disk with room for 4 KiB more: the write that
// crosses it writes what fits and fails with ENOSPC, as write(2) does.
type fillingWriter struct {
	w    io.Writer
	left int
}

func (f *fillingWriter) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.w.Write(p)
	}
	n, err := f.w.Write(p[:f.left])
	f.left -= n
	if err == nil {
		err = syscall.ENOSPC
	}
	return n, err
}

// TestStreamedCheckpointDiskFull: keyed tasks stream their state into a
// local store; a disk that fills up in the middle of one task's stream
// aborts that checkpoint and leaves nothing of it behind (no partial blob,
// no temporary file, no other task's blob of it), and the job goes on
// checkpointing and ends exactly once.
func TestStreamedCheckpointDiskFull(t *testing.T) {
	const n, k = 60000, 20000 // a task's state well over 4 KiB
	var st *diskFillsMidStream
	out, stateDir, _ := runKeycountAbortingTwo(t, n, k, func(local *store.Local) store.Store {
		st = &diskFillsMidStream{Local: local}
		return st
	})
	if !st.failed.Load() || st.streamed.Load() < 3 {
		t.Fatalf("%d streamed blobs, fault fired %v: the keyed state was not streamed", st.streamed.Load(), st.failed.Load())
	}
	failed := filepath.Join(stateDir, "keycount", fmt.Sprintf("chk-%020d", 2), filepath.FromSlash(*st.name.Load()))
	if _, err := os.Stat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the blob whose write failed is there: %v", err)
	}
	// Every task's blob of the aborted checkpoint is gone, those stored
	// after the job deleted it too (their late acknowledgements delete it
	// again).
	aborted := filepath.Join(stateDir, "keycount", fmt.Sprintf("chk-%020d", 2))
	if err := filepath.WalkDir(aborted, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			return fmt.Errorf("blob %s of the aborted checkpoint left behind", p)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(stateDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			return fmt.Errorf("temporary file %s left behind", p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := keycount.VerifyFile(out, n, k); err != nil {
		t.Fatal(err)
	}
}
