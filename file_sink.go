package weir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/weirstream/weir/internal/vfs"
)

// FileSink appends every record as a JSON line to the file at path (created if
// missing); a key's lines keep their order.
//
// Without checkpoints it writes directly. With checkpoints it is two-phase and
// runs as one instance: lines are staged in path+".staging/" per checkpoint and
// appended to path only when the checkpoint completes. Each commit is recorded
// in a small journal first (checkpoint id and the file's size before the
// append), so a process killed in the middle of a commit leaves neither a
// partial nor a repeated commit: the next start truncates to the recorded size
// and appends again. Each checkpoint also records the output's size once it
// is committed, so restoring an older checkpoint truncates the output back
// to what that checkpoint committed.
//
// Each Open of a checkpointed sink is a new incarnation that fences every
// earlier one, in this process or another (a paused process that resumes
// after its successor took over): under an exclusive OS lock on
// path+".staging/lock" it increments the generation in ".staging/fence"
// (and resets the staging on a fresh start), and every later step that
// changes the output or the staging directory (seal, commit, restore) takes
// the lock and refuses with a "fenced" error if the generation is no longer
// its own; so does a later Write. Each incarnation stages its lines
// in a file of its own (current-<generation>), which its successor removes,
// so a superseded instance's writes never reach the output or its
// successor's files. A superseded instance paused while holding the lock
// keeps it until it resumes: its successor waits for it, then takes over and
// its restore truncates away whatever that last step appended.
func FileSink[T any](path string) func(int) Sink[T] {
	return func(int) Sink[T] { return &fileSink[T]{path: path, fs: vfs.OS{}} }
}

// StagingDir is where a checkpointed FileSink for path stages its output.
func StagingDir(path string) string { return path + ".staging" }

type fileSink[T any] struct {
	path     string
	fs       vfs.FS // all its I/O: the OS, or a fault-injecting FS in tests
	twoPhase bool
	dir      string
	f        vfs.File // path (direct) or this instance's staging file (two-phase)
	lw       lineWriter
	gen      uint64 // two-phase: this instance's generation (see FileSink)
}

const (
	stagingPref = "current-" // current-<generation>: an instance's lines since its last seal
	legacyName  = "current"  // the staging file of versions before generations
	journalName = "commit-journal"
	pendingPref = "pending-"
	lockName    = "lock"
	fenceName   = "fence" // the newest instance's generation, 8 bytes big-endian
)

// maxInstances: with checkpoints, one file's staged output has one writer.
func (s *fileSink[T]) maxInstances(checkpointing bool) (int, string) {
	if checkpointing {
		return 1, fmt.Sprintf("file sink %s: with checkpoints it runs as one instance", s.path)
	}
	return 0, ""
}

func (s *fileSink[T]) Open(info TaskInfo) error {
	if !info.Checkpointing {
		f, err := s.fs.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("file sink %s[%d]: %w", info.Operator, info.Instance, err)
		}
		s.f, s.lw = f, lineWriter{w: f}
		return nil
	}
	if info.Parallelism != 1 {
		return fmt.Errorf("file sink %s: with checkpoints it runs as one instance, not %d", s.path, info.Parallelism)
	}
	s.twoPhase, s.dir = true, StagingDir(s.path)
	if err := s.fs.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("file sink %s: staging dir: %w", s.path, err)
	}
	return s.withLock(func() error {
		gen, err := s.readFence()
		if err != nil {
			return err
		}
		s.gen = gen + 1
		if err := s.writeFence(s.gen); err != nil {
			return err
		}
		// A fresh start: nothing staged by an earlier run belongs to this
		// one. A restore: earlier instances' unsealed lines belong to no
		// checkpoint.
		if err := s.clearStaging(!info.Restoring); err != nil {
			return err
		}
		if err := s.finishJournal(); err != nil {
			return err
		}
		return s.openCurrent()
	})
}

// openCurrent starts an empty staging file for the next checkpoint's lines.
func (s *fileSink[T]) openCurrent() error {
	f, err := s.fs.OpenFile(filepath.Join(s.dir, s.stagingName()), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("file sink %s: open staging file: %w", s.path, err)
	}
	s.f, s.lw = f, lineWriter{w: f}
	return nil
}

// Write fails once a newer instance took over (see FileSink); a write it
// already started lands in its own staging file, which nothing reads.
func (s *fileSink[T]) Write(b []T) error {
	if s.twoPhase {
		if err := s.checkStaging(); err != nil {
			return err
		}
	}
	for i := range b {
		if err := s.lw.add(b[i]); err != nil {
			return fmt.Errorf("file sink %s: %w", s.path, err)
		}
	}
	return nil
}

func (s *fileSink[T]) Finish() error {
	if err := s.lw.flush(); err != nil {
		return fmt.Errorf("file sink %s: write: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("file sink %s: sync: %w", s.path, err)
	}
	return nil
}

// Close closes the output. In two-phase mode the lines buffered since the
// last seal are dropped, not written: they belong to no checkpoint (a
// restore discards them anyway), and a sink closed after its run was
// replaced must not write into the staging file the new run's sink uses.
func (s *fileSink[T]) Close() error {
	if s.f == nil {
		return nil
	}
	var err error
	if s.twoPhase {
		s.lw.buf = s.lw.buf[:0]
	} else {
		err = s.lw.flush()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	if err != nil {
		return fmt.Errorf("file sink %s: close: %w", s.path, err)
	}
	return nil
}

// PrepareCommit seals the lines since the last checkpoint as pending-<id>
// and returns the checkpoint's state: the size the output has once id is
// committed (what it holds now plus every sealed, uncommitted pending file,
// all of which have ids up to id). Recover truncates the output back to it.
func (s *fileSink[T]) PrepareCommit(id uint64) ([]byte, error) {
	if err := s.Finish(); err != nil {
		return nil, err
	}
	if err := s.f.Close(); err != nil {
		return nil, fmt.Errorf("file sink %s: close staging file: %w", s.path, err)
	}
	s.f = nil
	var size int64
	err := s.fenced(func() error {
		if err := s.fs.Rename(filepath.Join(s.dir, s.stagingName()), filepath.Join(s.dir, pendingName(id))); err != nil {
			return fmt.Errorf("file sink %s: seal checkpoint %d: %w", s.path, id, err)
		}
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("file sink %s: seal checkpoint %d: sync staging dir: %w", s.path, id, err)
		}
		var err error
		if size, err = s.sizeOnCommit(); err != nil {
			return fmt.Errorf("file sink %s: checkpoint %d: %w", s.path, id, err)
		}
		return s.openCurrent()
	})
	if err != nil {
		return nil, err
	}
	return encodeCommittedSize(size), nil
}

// sizeOnCommit is the output's size once every sealed pending file is committed.
func (s *fileSink[T]) sizeOnCommit() (int64, error) {
	size, err := s.size(s.path)
	if err != nil {
		return 0, err
	}
	ids, err := s.pending()
	if err != nil {
		return 0, err
	}
	for _, k := range ids {
		n, err := s.size(filepath.Join(s.dir, pendingName(k)))
		if err != nil {
			return 0, err
		}
		size += n
	}
	return size, nil
}

// committedSizeLen is the length of a file sink's checkpoint state.
const committedSizeLen = 8

func encodeCommittedSize(size int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(size))
}

// Commit appends every pending file up to id to the output, oldest first.
func (s *fileSink[T]) Commit(id uint64) error {
	return s.fenced(func() error { return s.commitUpTo(id) })
}

// commitUpTo is Commit under the lock.
func (s *fileSink[T]) commitUpTo(id uint64) error {
	ids, err := s.pending()
	if err != nil {
		return err
	}
	for _, k := range ids {
		if k > id {
			break
		}
		if err := s.commitOne(k); err != nil {
			return err
		}
	}
	return nil
}

// Recover finishes what checkpoint id covers and drops what came after it:
// it commits the pending files up to id, truncates the output to the size
// recorded in state (output committed for later checkpoints, when an older
// checkpoint is restored) and deletes the pending files after id. Empty
// state (a checkpoint of a version that recorded none) skips the truncation.
func (s *fileSink[T]) Recover(id uint64, state []byte) error {
	if !s.twoPhase {
		return nil
	}
	if len(state) != 0 && len(state) != committedSizeLen {
		return fmt.Errorf("file sink %s: checkpoint %d: state is %d bytes, want %d", s.path, id, len(state), committedSizeLen)
	}
	return s.fenced(func() error {
		if err := s.commitUpTo(id); err != nil {
			return err
		}
		if len(state) == committedSizeLen {
			if err := s.rollBack(id, int64(binary.BigEndian.Uint64(state))); err != nil {
				return err
			}
		}
		ids, err := s.pending()
		if err != nil {
			return err
		}
		for _, k := range ids {
			if k > id {
				if err := s.fs.Remove(filepath.Join(s.dir, pendingName(k))); err != nil {
					return fmt.Errorf("file sink %s: drop uncommitted checkpoint %d: %w", s.path, k, err)
				}
			}
		}
		return nil
	})
}

// rollBack truncates the output to size, what checkpoint id committed. An
// output shorter than that lost committed lines (it was truncated or replaced
// after the checkpoint): that is an error, not something to paper over.
func (s *fileSink[T]) rollBack(id uint64, size int64) error {
	have, err := s.size(s.path)
	if err != nil {
		return fmt.Errorf("file sink %s: %w", s.path, err)
	}
	switch {
	case have == size:
		return nil
	case have < size:
		return fmt.Errorf("file sink %s: the output has %d bytes but checkpoint %d committed %d: it was truncated or replaced since", s.path, have, id, size)
	}
	out, err := s.fs.OpenFile(s.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("file sink %s: roll back to checkpoint %d: %w", s.path, id, err)
	}
	if err := out.Truncate(size); err != nil {
		out.Close()
		return fmt.Errorf("file sink %s: roll back to checkpoint %d: truncate %d to %d bytes: %w", s.path, id, have, size, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("file sink %s: roll back to checkpoint %d: sync: %w", s.path, id, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("file sink %s: roll back to checkpoint %d: close: %w", s.path, id, err)
	}
	return nil
}

// commitOne appends pending-k to the output under the journal.
func (s *fileSink[T]) commitOne(k uint64) error {
	size, err := s.size(s.path)
	if err != nil {
		return fmt.Errorf("file sink %s: %w", s.path, err)
	}
	if err := s.writeJournal(k, size); err != nil {
		return err
	}
	if err := s.appendPending(k, size); err != nil {
		return err
	}
	return s.clearJournal(k)
}

// appendPending truncates the output to size and appends pending-k, durably.
func (s *fileSink[T]) appendPending(k uint64, size int64) error {
	src, err := s.fs.Open(filepath.Join(s.dir, pendingName(k)))
	if err != nil {
		return fmt.Errorf("file sink %s: open pending checkpoint %d: %w", s.path, k, err)
	}
	defer src.Close() // read only: its close reports nothing worth failing for
	out, err := s.fs.OpenFile(s.path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("file sink %s: %w", s.path, err)
	}
	if err := appendTo(out, size, src); err != nil {
		out.Close()
		return fmt.Errorf("file sink %s: append checkpoint %d at %d bytes: %w", s.path, k, size, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("file sink %s: append checkpoint %d: close: %w", s.path, k, err)
	}
	return nil
}

// appendTo truncates out to size, copies src after it and syncs out.
func appendTo(out vfs.File, size int64, src io.Reader) error {
	if err := out.Truncate(size); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	if _, err := out.Seek(size, io.SeekStart); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	if _, err := io.Copy(out, src); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// writeJournal durably records that checkpoint k is being committed onto an
// output of size bytes.
func (s *fileSink[T]) writeJournal(k uint64, size int64) error {
	var rec [16]byte
	binary.BigEndian.PutUint64(rec[:8], k)
	binary.BigEndian.PutUint64(rec[8:], uint64(size))
	tmp := filepath.Join(s.dir, journalName+".tmp")
	if err := s.writeFileSync(tmp, rec[:]); err != nil {
		return fmt.Errorf("file sink %s: journal: %w", s.path, err)
	}
	if err := s.fs.Rename(tmp, filepath.Join(s.dir, journalName)); err != nil {
		return fmt.Errorf("file sink %s: journal: %w", s.path, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("file sink %s: journal: sync staging dir: %w", s.path, err)
	}
	return nil
}

// clearJournal ends checkpoint k's commit: its pending file goes, then the journal.
func (s *fileSink[T]) clearJournal(k uint64) error {
	if err := s.fs.Remove(filepath.Join(s.dir, pendingName(k))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file sink %s: remove committed checkpoint %d: %w", s.path, k, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("file sink %s: remove committed checkpoint %d: sync staging dir: %w", s.path, k, err)
	}
	if err := s.fs.Remove(filepath.Join(s.dir, journalName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file sink %s: clear journal: %w", s.path, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("file sink %s: clear journal: sync staging dir: %w", s.path, err)
	}
	return nil
}

// finishJournal completes a commit that a crash interrupted: if its pending
// file is still there the append is redone from the recorded size.
func (s *fileSink[T]) finishJournal() error {
	data, err := s.readFile(filepath.Join(s.dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("file sink %s: read journal: %w", s.path, err)
	}
	if len(data) != 16 {
		return fmt.Errorf("file sink %s: journal %s is %d bytes, want 16: corrupt", s.path, filepath.Join(s.dir, journalName), len(data))
	}
	k, size := binary.BigEndian.Uint64(data[:8]), int64(binary.BigEndian.Uint64(data[8:]))
	switch _, err := s.fs.Stat(filepath.Join(s.dir, pendingName(k))); {
	case err == nil:
		if err := s.appendPending(k, size); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file sink %s: finish the commit of checkpoint %d: %w", s.path, k, err)
	}
	return s.clearJournal(k)
}

// pending lists the sealed, uncommitted checkpoint ids, ascending.
func (s *fileSink[T]) pending() ([]uint64, error) {
	entries, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("file sink %s: list staging: %w", s.path, err)
	}
	var ids []uint64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, pendingPref) {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimPrefix(name, pendingPref), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("file sink %s: unexpected staging file %q", s.path, name)
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func pendingName(id uint64) string { return fmt.Sprintf("%s%020d", pendingPref, id) }

// size is the size of the file at path, 0 if there is none.
func (s *fileSink[T]) size(path string) (int64, error) {
	st, err := s.fs.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// readFile reads the whole file at path.
func (s *fileSink[T]) readFile(path string) ([]byte, error) {
	f, err := s.fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // read only
	return io.ReadAll(f)
}

// writeFileSync creates or replaces path with data, durably.
func (s *fileSink[T]) writeFileSync(path string, data []byte) error {
	f, err := s.fs.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
