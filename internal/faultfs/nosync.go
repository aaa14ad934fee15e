package faultfs

import (
	"io/fs"

	"github.com/weirstream/weir/internal/vfs"
)

// NoSync wraps inner so that fsyncs (File.Sync and SyncDir) return at once
// without reaching the disk. It is for tests that sweep a fault over every
// call of a protocol and check what the calls leave in the files, not what
// survives a power cut: the fsyncs would only make each run slower.
func NoSync(inner vfs.FS) vfs.FS { return noSync{inner} }

type noSync struct{ vfs.FS }

func (n noSync) SyncDir(string) error { return nil }

func (n noSync) CreateTemp(dir, pattern string) (vfs.File, error) {
	return noSyncFile(n.FS.CreateTemp(dir, pattern))
}

func (n noSync) Open(p string) (vfs.File, error) { return noSyncFile(n.FS.Open(p)) }

func (n noSync) OpenFile(p string, flag int, perm fs.FileMode) (vfs.File, error) {
	return noSyncFile(n.FS.OpenFile(p, flag, perm))
}

func noSyncFile(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return unsyncedFile{f}, nil
}

type unsyncedFile struct{ vfs.File }

func (unsyncedFile) Sync() error { return nil }
