package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
)

// Local is a Store in a local directory:
//
//	<dir>/<job>/chk-<id 20 digits>/<blob name, "/" kept as subdirectories>
//	<dir>/<job>/chk-<id 20 digits>/_manifest
//
// Files are written atomically and durably (temp file, fsync, rename,
// directory fsync); temporary files start with "." and are never visible
// under a blob or manifest name.
type Local struct {
	root    string
	fs      FS
	mkdirMu sync.Mutex
	// indexMu serialises rewriting a local state index with deleting
	// checkpoints, for every Mirror sharing this store (one per job).
	indexMu sync.Mutex
	closed  atomic.Bool
	warm    warmMemory // for restores after a restart (Prewarm)
	direct  bool       // blobs are written past the page cache
}

var _ Store = (*Local)(nil)

// LocalOption configures a Local store.
type LocalOption func(*Local)

// WithFS makes the Local store do its I/O through fsys instead of the
// operating system (for fault injection in tests).
func WithFS(fsys FS) LocalOption {
	return func(l *Local) { l.fs = fsys }
}

// WithDirectWrites makes the Local store write blobs past the page cache
// (direct I/O, on Linux where the file system allows it): a checkpoint's
// blobs are not copied into the page cache, and the kernel has no dirty
// pages of them to write back and reclaim while the job runs. A restore
// then reads them from the disk rather than from the cache.
func WithDirectWrites() LocalOption {
	return func(l *Local) { l.direct = true }
}

// WritesDirectly reports whether the store writes blobs past the page
// cache (WithDirectWrites).
func (l *Local) WritesDirectly() bool { return l.direct }

// NewLocal opens (creating if needed) a Local store rooted at dir.
func NewLocal(dir string, opts ...LocalOption) (*Local, error) {
	if dir == "" {
		return nil, fmt.Errorf("open local store: empty directory: %w", ErrInvalidName)
	}
	l := &Local{root: filepath.Clean(dir), fs: OSFS{}}
	for _, o := range opts {
		o(l)
	}
	if err := l.fs.MkdirAll(l.root, 0o755); err != nil {
		return nil, fmt.Errorf("open local store in %s: %w", l.root, err)
	}
	return l, nil
}

// Dir returns the root directory of the store.
func (l *Local) Dir() string { return l.root }

func (l *Local) check(ctx context.Context) error {
	if l.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// checkpointRel is the slash-separated path of a checkpoint below the root.
func checkpointRel(job string, ckpt uint64) string {
	return path.Join(job, checkpointDir(ckpt))
}

func (l *Local) abs(rel string) string {
	return filepath.Join(l.root, filepath.FromSlash(rel))
}

// PutBlob implements Store.
func (l *Local) PutBlob(ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error) {
	return l.PutBlobStream(ctx, job, ckpt, name, func(w io.Writer) error { return writeAll(w, data) })
}

// PutBlobStream implements BlobStreamer: what write writes goes straight
// into the temporary file that becomes the blob.
func (l *Local) PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(w io.Writer) error) (BlobRef, error) {
	wrap := func(err error) error {
		return fmt.Errorf("put blob %q of job %q checkpoint %d: %w", name, job, ckpt, err)
	}
	if err := l.check(ctx); err != nil {
		return BlobRef{}, wrap(err)
	}
	if err := ValidateJob(job); err != nil {
		return BlobRef{}, wrap(err)
	}
	if err := ValidateBlobName(name); err != nil {
		return BlobRef{}, wrap(err)
	}
	rel := path.Join(checkpointRel(job, ckpt), name)
	if err := l.ensureDir(path.Dir(rel)); err != nil {
		return BlobRef{}, wrap(err)
	}
	var tally *blobTally
	if err := l.writeFileAtomicWith(l.abs(rel), true, func(f io.Writer) error {
		tally = newBlobTally(ctx, f)
		return write(tally)
	}); err != nil {
		return BlobRef{}, wrap(err)
	}
	return tally.ref(name), nil
}

// GetBlob implements Store.
func (l *Local) GetBlob(ctx context.Context, job string, ckpt uint64, ref BlobRef) ([]byte, error) {
	return getBlob(job, ckpt, ref, func(name string) ([]byte, error) { return l.readObject(ctx, job, ckpt, name) })
}

// GetSections implements SectionReader: each file is read once.
func (l *Local) GetSections(ctx context.Context, job string, ckpt uint64, refs []BlobRef) ([][]byte, error) {
	return sectionsOf(job, ckpt, refs, func(name string) ([]byte, error) { return l.readObject(ctx, job, ckpt, name) })
}

// readObject reads blob file name of a checkpoint, unverified.
func (l *Local) readObject(ctx context.Context, job string, ckpt uint64, name string) ([]byte, error) {
	if err := l.check(ctx); err != nil {
		return nil, err
	}
	if err := ValidateJob(job); err != nil {
		return nil, err
	}
	if err := ValidateBlobName(name); err != nil {
		return nil, err
	}
	return l.readFile(l.abs(path.Join(checkpointRel(job, ckpt), name)))
}

// readFile reads a whole file; a missing file wraps ErrNotFound.
func (l *Local) readFile(p string) ([]byte, error) {
	f, err := l.fs.Open(p)
	if err != nil {
		// ENOTDIR: a path component is a file, so this name holds nothing.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// CommitManifest implements Store.
func (l *Local) CommitManifest(ctx context.Context, m *Manifest) error {
	if err := validateManifest(m); err != nil {
		return err
	}
	wrap := func(err error) error {
		return fmt.Errorf("commit manifest of job %q checkpoint %d: %w", m.Job, m.CheckpointID, err)
	}
	if err := l.check(ctx); err != nil {
		return wrap(err)
	}
	data, err := EncodeManifest(m)
	if err != nil {
		return wrap(err)
	}
	rel := checkpointRel(m.Job, m.CheckpointID)
	if err := l.ensureDir(rel); err != nil {
		return wrap(err)
	}
	p := l.abs(path.Join(rel, manifestName))
	old, err := l.readFile(p)
	switch {
	case err == nil:
		same, conflict := compareCommitted(m.Job, m.CheckpointID, old, data)
		if same {
			return nil
		}
		if conflict {
			return wrap(fmt.Errorf("a different manifest is committed: %w", ErrExists))
		}
		// A corrupt manifest means the checkpoint does not exist; replace it.
	case errors.Is(err, ErrNotFound):
	default:
		return wrap(err)
	}
	if err := l.writeFileAtomic(p, data); err != nil {
		return wrap(err)
	}
	return nil
}

// Manifest implements Store.
func (l *Local) Manifest(ctx context.Context, job string, ckpt uint64) (*Manifest, error) {
	if err := l.check(ctx); err != nil {
		return nil, fmt.Errorf("manifest of job %q checkpoint %d: %w", job, ckpt, err)
	}
	if err := ValidateJob(job); err != nil {
		return nil, fmt.Errorf("manifest of checkpoint %d: %w", ckpt, err)
	}
	return l.readManifest(job, ckpt)
}

func (l *Local) readManifest(job string, ckpt uint64) (*Manifest, error) {
	data, err := l.readFile(l.abs(path.Join(checkpointRel(job, ckpt), manifestName)))
	if err != nil {
		return nil, fmt.Errorf("manifest of job %q checkpoint %d: %w", job, ckpt, err)
	}
	return decodeManifestFor(job, ckpt, data)
}

// decodeManifestFor decodes a manifest found at job/ckpt and checks that it
// belongs there.
func decodeManifestFor(job string, ckpt uint64, data []byte) (*Manifest, error) {
	m, err := DecodeManifest(data)
	if err == nil {
		err = checkManifestIdentity(m, job, ckpt)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest of job %q checkpoint %d: %w", job, ckpt, err)
	}
	return m, nil
}

// checkpointIDs lists the checkpoint directories of a job, committed or not.
func (l *Local) checkpointIDs(job string) ([]uint64, error) {
	entries, err := l.fs.ReadDir(l.abs(job))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list checkpoint directories of job %q: %w", job, err)
	}
	var ids []uint64
	for _, e := range entries {
		if id, ok := parseCheckpointDir(e.Name()); ok && e.IsDir() {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (l *Local) prepareJob(ctx context.Context, op, job string) ([]uint64, readManifestFunc, error) {
	if err := l.check(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s of job %q: %w", op, job, err)
	}
	if err := ValidateJob(job); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	ids, err := l.checkpointIDs(job)
	if err != nil {
		return nil, nil, err
	}
	read := func(ctx context.Context, ckpt uint64) (*Manifest, error) {
		if err := l.check(ctx); err != nil {
			return nil, err
		}
		return l.readManifest(job, ckpt)
	}
	return ids, read, nil
}

// Latest implements Store.
func (l *Local) Latest(ctx context.Context, job string) (*Manifest, error) {
	ids, read, err := l.prepareJob(ctx, "latest checkpoint", job)
	if err != nil {
		return nil, err
	}
	return latestValid(ctx, job, ids, read)
}

// List implements Store.
func (l *Local) List(ctx context.Context, job string) ([]uint64, error) {
	ids, read, err := l.prepareJob(ctx, "list checkpoints", job)
	if err != nil {
		return nil, err
	}
	return listValid(ctx, job, ids, read)
}

// Uncommitted lists the checkpoints of job that have stored data but no
// manifest that verifies (aborted or in-progress checkpoints, or ones with a
// corrupt manifest), ascending: candidates for Delete.
func (l *Local) Uncommitted(ctx context.Context, job string) ([]uint64, error) {
	ids, read, err := l.prepareJob(ctx, "uncommitted checkpoints", job)
	if err != nil {
		return nil, err
	}
	return uncommitted(ctx, job, ids, read)
}

// Delete implements Store.
func (l *Local) Delete(ctx context.Context, job string, ckpt uint64) error {
	wrap := func(err error) error {
		return fmt.Errorf("delete checkpoint %d of job %q: %w", ckpt, job, err)
	}
	if err := l.check(ctx); err != nil {
		return wrap(err)
	}
	if err := ValidateJob(job); err != nil {
		return wrap(err)
	}
	rel := checkpointRel(job, ckpt)
	dir := l.abs(rel)
	removedManifest := false
	switch err := l.fs.Remove(filepath.Join(dir, manifestName)); {
	case err == nil:
		removedManifest = true
		if err := l.fs.SyncDir(dir); err != nil {
			return wrap(fmt.Errorf("fsync directory %s after removing the manifest: %w", dir, err))
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return wrap(fmt.Errorf("remove manifest: %w", err))
	}
	if _, err := l.fs.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !removedManifest {
			return wrap(ErrNotFound)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return wrap(err)
		}
		return nil
	}
	if err := l.fs.RemoveAll(dir); err != nil {
		return wrap(fmt.Errorf("remove blobs: %w", err))
	}
	if err := l.fs.SyncDir(l.abs(job)); err != nil {
		return wrap(fmt.Errorf("fsync job directory: %w", err))
	}
	return nil
}

// Close implements Store; it is idempotent.
func (l *Local) Close() error {
	l.closed.Store(true)
	l.warm.close()
	return nil
}
