package store

import (
	"io"
	"io/fs"
	"os"
)

// FS is the small filesystem the Local store does all its I/O through, so
// tests can inject faults (failing fsync or rename, a full disk).
type FS interface {
	// MkdirAll creates a directory and its parents (used for the root only).
	MkdirAll(path string, perm fs.FileMode) error
	// Mkdir creates one directory; it fails with fs.ErrExist if it exists.
	Mkdir(path string, perm fs.FileMode) error
	// CreateTemp creates a new, exclusive file in dir whose name is pattern
	// with the last "*" replaced by a random string.
	CreateTemp(dir, pattern string) (File, error)
	// Open opens a file for reading.
	Open(path string) (File, error)
	// Rename atomically replaces newpath with oldpath.
	Rename(oldpath, newpath string) error
	// Remove removes a file or an empty directory.
	Remove(path string) error
	// RemoveAll removes path and everything below it; a missing path is not an error.
	RemoveAll(path string) error
	// ReadDir lists a directory, sorted by name.
	ReadDir(path string) ([]fs.DirEntry, error)
	// Stat describes a file or directory.
	Stat(path string) (fs.FileInfo, error)
	// SyncDir fsyncs a directory so entries created, renamed or removed in
	// it are durable.
	SyncDir(path string) error
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Name returns the path the file was opened or created with.
	Name() string
	// Sync fsyncs the file's contents.
	Sync() error
}

// OSFS is the FS of the operating system.
type OSFS struct{}

var _ FS = OSFS{}

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// Mkdir implements FS.
func (OSFS) Mkdir(path string, perm fs.FileMode) error { return os.Mkdir(path, perm) }

// CreateTemp implements FS.
func (OSFS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

// Open implements FS.
func (OSFS) Open(path string) (File, error) { return os.Open(path) }

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(path string) error { return os.Remove(path) }

// RemoveAll implements FS.
func (OSFS) RemoveAll(path string) error { return os.RemoveAll(path) }

// ReadDir implements FS.
func (OSFS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// Stat implements FS.
func (OSFS) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// SyncDir implements FS.
func (OSFS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
