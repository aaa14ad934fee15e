package store

import (
	"fmt"
	"io/fs"
	"strings"
	"sync"
)

// faultFS wraps an FS, records every operation and fails the ones that
// match an armed fault (in the spirit of pebble's vfs/errorfs).
type faultFS struct {
	inner FS
	mu    sync.Mutex
	log   []string // "op path" in call order
	rules []*fault
}

// fault fails operation op on paths matching match, times times (-1 forever).
type fault struct {
	op    string // mkdir, create, write, sync, close, rename, remove, syncdir, open, readdir, removeall
	match func(path string) bool
	err   error
	times int
}

func newFaultFS() *faultFS { return &faultFS{inner: OSFS{}} }

// arm adds a fault that fails op, forever, on paths match accepts.
func (f *faultFS) arm(op string, match func(path string) bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &fault{op: op, match: match, err: err, times: -1})
}

// containing matches paths that contain substr.
func containing(substr string) func(string) bool {
	return func(p string) bool { return strings.Contains(p, substr) }
}

// exactly matches one path.
func exactly(path string) func(string) bool {
	return func(p string) bool { return p == path }
}

func (f *faultFS) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

func (f *faultFS) ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *faultFS) resetLog() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = nil
}

// hit records op on path and returns the injected error, if any.
func (f *faultFS) hit(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, op+" "+path)
	for _, r := range f.rules {
		if r.op == op && r.times != 0 && r.match(path) {
			if r.times > 0 {
				r.times--
			}
			return &fs.PathError{Op: op, Path: path, Err: r.err}
		}
	}
	return nil
}

func (f *faultFS) MkdirAll(p string, perm fs.FileMode) error {
	if err := f.hit("mkdirall", p); err != nil {
		return err
	}
	return f.inner.MkdirAll(p, perm)
}

func (f *faultFS) Mkdir(p string, perm fs.FileMode) error {
	if err := f.hit("mkdir", p); err != nil {
		return err
	}
	return f.inner.Mkdir(p, perm)
}

func (f *faultFS) CreateTemp(dir, pattern string) (File, error) {
	if err := f.hit("create", dir); err != nil {
		return nil, err
	}
	file, err := f.inner.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Open(p string) (File, error) {
	if err := f.hit("open", p); err != nil {
		return nil, err
	}
	return f.inner.Open(p)
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	if err := f.hit("rename", oldpath+" -> "+newpath); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

func (f *faultFS) Remove(p string) error {
	if err := f.hit("remove", p); err != nil {
		return err
	}
	return f.inner.Remove(p)
}

func (f *faultFS) RemoveAll(p string) error {
	if err := f.hit("removeall", p); err != nil {
		return err
	}
	return f.inner.RemoveAll(p)
}

func (f *faultFS) ReadDir(p string) ([]fs.DirEntry, error) {
	if err := f.hit("readdir", p); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(p)
}

func (f *faultFS) Stat(p string) (fs.FileInfo, error) {
	return f.inner.Stat(p)
}

func (f *faultFS) SyncDir(p string) error {
	if err := f.hit("syncdir", p); err != nil {
		return err
	}
	return f.inner.SyncDir(p)
}

// faultFile injects faults into writes, fsyncs and closes. A failing write
// writes half of the buffer first, like a disk that fills up mid-write.
type faultFile struct {
	File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.hit("write", f.Name()); err != nil {
		n, werr := f.File.Write(p[:len(p)/2])
		if werr != nil {
			return n, fmt.Errorf("%w (and %v)", err, werr)
		}
		return n, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.hit("sync", f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Close() error {
	if err := f.fs.hit("close", f.Name()); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}
