package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// tempPattern names temporary files; the leading "." keeps them apart from
// blob names, which may not start with ".".
const tempPattern = ".tmp-*"

// writeFileAtomic makes data durable under path, never exposing a partial
// file there: write a temporary file in the same directory, fsync it, rename
// it over path, fsync the directory. On failure the temporary file is
// removed, and if only the directory fsync failed the renamed file is
// removed again, so a failed write leaves nothing visible. The error says
// which step failed on which file.
func (l *Local) writeFileAtomic(path string, data []byte) error {
	return l.writeFileAtomicWith(path, false, func(f io.Writer) error { return writeAll(f, data) })
}

// writeAll writes data to w; a short write without an error is
// io.ErrShortWrite.
func writeAll(w io.Writer, data []byte) error {
	n, err := w.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	return err
}

// writeFileAtomicWith is writeFileAtomic of what write writes to the
// temporary file, past the page cache with direct when the store writes
// directly (WithDirectWrites); an error of write fails it as a failed
// write does.
func (l *Local) writeFileAtomicWith(path string, direct bool, write func(f io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := l.fs.CreateTemp(dir, tempPattern)
	if err != nil {
		return fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	tmp := f.Name()
	fail := func(step string, err error) error {
		f.Close()
		if rmErr := l.fs.Remove(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: %w (and removing it failed: %v)", step, tmp, err, rmErr)
		}
		return fmt.Errorf("%s %s: %w", step, tmp, err)
	}
	if err := l.writeTo(f, direct && l.direct, write); err != nil {
		return fail("write temp file", err)
	}
	if err := f.Sync(); err != nil {
		return fail("fsync temp file", err)
	}
	if err := f.Close(); err != nil {
		if rmErr := l.fs.Remove(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			return fmt.Errorf("close temp file %s: %w (and removing it failed: %v)", tmp, err, rmErr)
		}
		return fmt.Errorf("close temp file %s: %w", tmp, err)
	}
	if err := l.fs.Rename(tmp, path); err != nil {
		if rmErr := l.fs.Remove(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			return fmt.Errorf("rename %s to %s: %w (and removing the temp file failed: %v)", tmp, path, err, rmErr)
		}
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	if err := l.fs.SyncDir(dir); err != nil {
		// The rename may or may not survive a crash; take it back so the
		// caller's view (the write failed) matches what is visible.
		if rmErr := l.fs.Remove(path); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			return fmt.Errorf("fsync directory %s after renaming into %s: %w (and removing it failed: %v)", dir, path, err, rmErr)
		}
		return fmt.Errorf("fsync directory %s after renaming into %s: %w", dir, path, err)
	}
	return nil
}

// ensureDir creates the directories of rel (slash-separated, relative to the
// store root) that do not exist yet, fsyncing each new directory's parent so
// the new entry is durable. It is serialised so a concurrent writer that
// finds a directory already present knows its parent was fsynced.
func (l *Local) ensureDir(rel string) error {
	l.mkdirMu.Lock()
	defer l.mkdirMu.Unlock()
	cur := l.root
	for _, seg := range strings.Split(rel, "/") {
		next := filepath.Join(cur, seg)
		err := l.fs.Mkdir(next, 0o755)
		switch {
		case err == nil:
			if err := l.fs.SyncDir(cur); err != nil {
				_ = l.fs.Remove(next)
				return fmt.Errorf("fsync directory %s after creating %s: %w", cur, next, err)
			}
		case errors.Is(err, fs.ErrExist):
		default:
			return fmt.Errorf("create directory %s: %w", next, err)
		}
		cur = next
	}
	return nil
}

// writeTo runs write on f, past the page cache with direct.
func (l *Local) writeTo(f File, direct bool, write func(f io.Writer) error) error {
	if !direct {
		return write(f)
	}
	w, finish := newDirectWriter(f)
	err := write(w)
	if ferr := finish(); err == nil {
		err = ferr
	}
	return err
}
