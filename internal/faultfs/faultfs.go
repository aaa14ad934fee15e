// Package faultfs is a file system for tests that records every call and
// makes chosen calls fail, in the spirit of pebble's vfs/errorfs: a rule
// fails one operation on matching paths (a full disk on writes under a
// directory, a failing fsync), FailCall fails the n-th call only, and
// CrashAfter makes every call after the n-th fail without touching the disk,
// as if the process had died there.
package faultfs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/weirstream/weir/internal/vfs"
)

// ErrCrashed is what every call fails with once the simulated crash point
// is passed.
var ErrCrashed = errors.New("faultfs: the process crashed before this call")

// Operation names, as they appear in Ops and as Arm takes them.
const (
	OpMkdirAll  = "mkdirall"
	OpMkdir     = "mkdir"
	OpCreate    = "create" // CreateTemp; the path is the directory
	OpOpen      = "open"
	OpOpenFile  = "openfile"
	OpRename    = "rename" // the path is "old -> new"
	OpRemove    = "remove"
	OpRemoveAll = "removeall"
	OpReadDir   = "readdir"
	OpStat      = "stat"
	OpSyncDir   = "syncdir"
	OpRead      = "read"
	OpWrite     = "write"
	OpSeek      = "seek"
	OpSync      = "sync"
	OpTruncate  = "truncate"
	OpClose     = "close"
)

// FS wraps another FS. It is safe for concurrent use.
type FS struct {
	inner vfs.FS
	mu    sync.Mutex
	log   []string // "op path" in call order, since the last ResetLog
	calls int      // every call so far
	rules []*rule
	// failAt fails call number failAt (1-based) with failErr; 0 is none.
	failAt  int
	failErr error
	// crashAfter, if >= 0, fails every call after that many calls.
	crashAfter int
}

// rule fails operation op on paths match accepts.
type rule struct {
	op    string
	match func(path string) bool
	err   error
}

var _ vfs.FS = (*FS)(nil)

// New wraps inner; with no rules armed it only records.
func New(inner vfs.FS) *FS { return &FS{inner: inner, crashAfter: -1} }

// Arm makes every later call of op on a path match accepts fail with err
// (wrapped in an *fs.PathError), until Disarm.
func (f *FS) Arm(op string, match func(path string) bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &rule{op: op, match: match, err: err})
}

// FailCall makes call number n (counted from 1 over the FS's life, see
// Calls) fail with err; the calls before and after it go through.
func (f *FS) FailCall(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failAt, f.failErr = n, err
}

// CrashAfter makes every call after the first n (counted over the FS's
// life) fail with ErrCrashed without reaching the disk. A Write that
// crashes writes the first half of its buffer first: a torn write.
func (f *FS) CrashAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashAfter = n
}

// Disarm removes every rule, FailCall and CrashAfter.
func (f *FS) Disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules, f.failAt, f.failErr, f.crashAfter = nil, 0, nil, -1
}

// Calls is how many calls the FS has had.
func (f *FS) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Ops returns the calls since the last ResetLog, "op path" each.
func (f *FS) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// ResetLog forgets the calls recorded so far (Calls keeps counting).
func (f *FS) ResetLog() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = nil
}

// Containing matches paths that contain substr.
func Containing(substr string) func(string) bool {
	return func(p string) bool { return strings.Contains(p, substr) }
}

// Exactly matches one path.
func Exactly(path string) func(string) bool {
	return func(p string) bool { return p == path }
}

// hit counts and records a call and returns the error to inject, if any.
func (f *FS) hit(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.log = append(f.log, op+" "+path)
	if f.crashAfter >= 0 && f.calls > f.crashAfter {
		return &fs.PathError{Op: op, Path: path, Err: ErrCrashed}
	}
	if f.calls == f.failAt {
		return &fs.PathError{Op: op, Path: path, Err: f.failErr}
	}
	for _, r := range f.rules {
		if r.op == op && r.match(path) {
			return &fs.PathError{Op: op, Path: path, Err: r.err}
		}
	}
	return nil
}

// MkdirAll implements vfs.FS.
func (f *FS) MkdirAll(p string, perm fs.FileMode) error {
	if err := f.hit(OpMkdirAll, p); err != nil {
		return err
	}
	return f.inner.MkdirAll(p, perm)
}

// Mkdir implements vfs.FS.
func (f *FS) Mkdir(p string, perm fs.FileMode) error {
	if err := f.hit(OpMkdir, p); err != nil {
		return err
	}
	return f.inner.Mkdir(p, perm)
}

// CreateTemp implements vfs.FS.
func (f *FS) CreateTemp(dir, pattern string) (vfs.File, error) {
	if err := f.hit(OpCreate, dir); err != nil {
		return nil, err
	}
	return f.wrap(f.inner.CreateTemp(dir, pattern))
}

// Open implements vfs.FS.
func (f *FS) Open(p string) (vfs.File, error) {
	if err := f.hit(OpOpen, p); err != nil {
		return nil, err
	}
	return f.wrap(f.inner.Open(p))
}

// OpenFile implements vfs.FS.
func (f *FS) OpenFile(p string, flag int, perm fs.FileMode) (vfs.File, error) {
	if err := f.hit(OpOpenFile, p); err != nil {
		return nil, err
	}
	return f.wrap(f.inner.OpenFile(p, flag, perm))
}

func (f *FS) wrap(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

// Rename implements vfs.FS.
func (f *FS) Rename(oldpath, newpath string) error {
	if err := f.hit(OpRename, oldpath+" -> "+newpath); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

// Remove implements vfs.FS.
func (f *FS) Remove(p string) error {
	if err := f.hit(OpRemove, p); err != nil {
		return err
	}
	return f.inner.Remove(p)
}

// RemoveAll implements vfs.FS.
func (f *FS) RemoveAll(p string) error {
	if err := f.hit(OpRemoveAll, p); err != nil {
		return err
	}
	return f.inner.RemoveAll(p)
}

// ReadDir implements vfs.FS.
func (f *FS) ReadDir(p string) ([]fs.DirEntry, error) {
	if err := f.hit(OpReadDir, p); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(p)
}

// Stat implements vfs.FS.
func (f *FS) Stat(p string) (fs.FileInfo, error) {
	if err := f.hit(OpStat, p); err != nil {
		return nil, err
	}
	return f.inner.Stat(p)
}

// SyncDir implements vfs.FS.
func (f *FS) SyncDir(p string) error {
	if err := f.hit(OpSyncDir, p); err != nil {
		return err
	}
	return f.inner.SyncDir(p)
}

// faultFile injects faults into the calls on an open file. A failing write
// writes half of the buffer first, like a disk that fills up mid-write or a
// process killed mid-write.
type faultFile struct {
	vfs.File
	fs *FS
}

func (f *faultFile) Read(p []byte) (int, error) {
	if err := f.fs.hit(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.hit(OpWrite, f.Name()); err != nil {
		n, werr := f.File.Write(p[:len(p)/2])
		if werr != nil {
			return n, fmt.Errorf("%w (and %v)", err, werr)
		}
		return n, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Seek(offset int64, whence int) (int64, error) {
	if err := f.fs.hit(OpSeek, f.Name()); err != nil {
		return 0, err
	}
	return f.File.Seek(offset, whence)
}

func (f *faultFile) Sync() error {
	if err := f.fs.hit(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.hit(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// Close releases the file even when it fails the call: a failed close
// still closes the descriptor, and a crashed process's files are closed.
func (f *faultFile) Close() error {
	if err := f.fs.hit(OpClose, f.Name()); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}
