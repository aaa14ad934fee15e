// Package vfs is the small file-system interface that weir's durable writers
// (the local checkpoint store, the file sink) do all their I/O through, so
// tests can put a fault-injecting file system (internal/faultfs) in its place.
package vfs

import (
	"io"
	"io/fs"
	"os"
)

// FS is a file system.
type FS interface {
	// MkdirAll creates a directory and its parents.
	MkdirAll(path string, perm fs.FileMode) error
	// Mkdir creates one directory; it fails with fs.ErrExist if it exists.
	Mkdir(path string, perm fs.FileMode) error
	// CreateTemp creates a new, exclusive file in dir whose name is pattern
	// with the last "*" replaced by a random string.
	CreateTemp(dir, pattern string) (File, error)
	// Open opens a file for reading.
	Open(path string) (File, error)
	// OpenFile opens a file with os.OpenFile's flags.
	OpenFile(path string, flag int, perm fs.FileMode) (File, error)
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
	io.Seeker
	io.Closer
	// Name returns the path the file was opened or created with.
	Name() string
	// Sync fsyncs the file's contents.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
}

// OS is the operating system's file system.
type OS struct{}

var _ FS = OS{}

// MkdirAll implements FS.
func (OS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// Mkdir implements FS.
func (OS) Mkdir(path string, perm fs.FileMode) error { return os.Mkdir(path, perm) }

// CreateTemp implements FS.
func (OS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

// Open implements FS.
func (OS) Open(path string) (File, error) { return os.Open(path) }

// OpenFile implements FS.
func (OS) OpenFile(path string, flag int, perm fs.FileMode) (File, error) {
	return os.OpenFile(path, flag, perm)
}

// Rename implements FS.
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OS) Remove(path string) error { return os.Remove(path) }

// RemoveAll implements FS.
func (OS) RemoveAll(path string) error { return os.RemoveAll(path) }

// ReadDir implements FS.
func (OS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// Stat implements FS.
func (OS) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// SyncDir implements FS.
func (OS) SyncDir(path string) error {
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
