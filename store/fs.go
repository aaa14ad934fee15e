package store

import "github.com/weirstream/weir/internal/vfs"

// FS is the small filesystem the Local store does all its I/O through, so
// tests can inject faults (failing fsync or rename, a full disk).
type FS = vfs.FS

// File is an open file of an FS.
type File = vfs.File

// OSFS is the FS of the operating system.
type OSFS = vfs.OS
