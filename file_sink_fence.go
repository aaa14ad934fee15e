package weir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirstream/weir/internal/vfs"
)

// The file sink's fence against a superseded instance (see FileSink): the
// staging directory's lock, the generation in its fence file and each
// instance's own staging file.

// errFenced: a newer instance of the sink took over from this one.
var errFenced = errors.New("fenced")

// clearStaging removes the staging directory's entries but the lock and
// the fence: all of them, or only the staging files of earlier instances.
func (s *fileSink[T]) clearStaging(all bool) error {
	entries, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("file sink %s: list staging: %w", s.path, err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == lockName || name == fenceName:
			continue
		case all || name == legacyName || strings.HasPrefix(name, stagingPref):
			if err := s.fs.RemoveAll(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("file sink %s: clear staging: %w", s.path, err)
			}
		}
	}
	return nil
}

// withLock runs step holding the staging directory's lock.
func (s *fileSink[T]) withLock(step func() error) error {
	l, err := vfs.LockFile(filepath.Join(s.dir, lockName))
	if err != nil {
		return fmt.Errorf("file sink %s: %w", s.path, err)
	}
	err = step()
	if uerr := l.Unlock(); err == nil && uerr != nil {
		err = fmt.Errorf("file sink %s: %w", s.path, uerr)
	}
	return err
}

// fenced runs a step that changes the output or the staging directory:
// under the lock, and only while this instance is the newest.
func (s *fileSink[T]) fenced(step func() error) error {
	return s.withLock(func() error {
		if err := s.checkFence(); err != nil {
			return err
		}
		return step()
	})
}

// checkFence fails with errFenced if a newer instance took over.
func (s *fileSink[T]) checkFence() error {
	gen, err := s.readFence()
	if err != nil {
		return err
	}
	if gen != s.gen {
		return fmt.Errorf("file sink %s: %w: instance generation %d superseded by %d", s.path, errFenced, s.gen, gen)
	}
	return nil
}

// readFence reads the newest instance's generation, 0 if none was written.
func (s *fileSink[T]) readFence() (uint64, error) {
	path := filepath.Join(s.dir, fenceName)
	data, err := s.readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("file sink %s: read fence: %w", s.path, err)
	}
	if len(data) != 8 {
		return 0, fmt.Errorf("file sink %s: fence %s is %d bytes, want 8: corrupt", s.path, path, len(data))
	}
	return binary.BigEndian.Uint64(data), nil
}

// writeFence replaces the generation (under the lock). The directory is
// not synced: a generation lost by a machine crash fenced processes that
// died with it.
func (s *fileSink[T]) writeFence(gen uint64) error {
	tmp := filepath.Join(s.dir, fenceName+".tmp")
	if err := s.writeFileSync(tmp, binary.BigEndian.AppendUint64(nil, gen)); err != nil {
		return fmt.Errorf("file sink %s: write fence: %w", s.path, err)
	}
	if err := s.fs.Rename(tmp, filepath.Join(s.dir, fenceName)); err != nil {
		return fmt.Errorf("file sink %s: write fence: %w", s.path, err)
	}
	return nil
}

// stagingName is this instance's staging file.
func (s *fileSink[T]) stagingName() string { return stagingPref + strconv.FormatUint(s.gen, 10) }

// checkStaging fails if this instance's staging file is gone: a newer
// instance took over (and removed it), which makes the error errFenced.
func (s *fileSink[T]) checkStaging() error {
	_, err := s.fs.Stat(filepath.Join(s.dir, s.stagingName()))
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file sink %s: staging file: %w", s.path, err)
	}
	if err := s.checkFence(); err != nil {
		return err
	}
	return fmt.Errorf("file sink %s: staging file %s is gone", s.path, s.stagingName())
}
