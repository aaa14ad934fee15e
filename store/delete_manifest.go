package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"
)

// DeleteManifest implements ManifestDeleter: the checkpoint is no longer
// committed, its blobs stay until Delete.
func (l *Local) DeleteManifest(ctx context.Context, job string, ckpt uint64) error {
	wrap := func(err error) error {
		return fmt.Errorf("delete manifest of checkpoint %d of job %q: %w", ckpt, job, err)
	}
	if err := l.check(ctx); err != nil {
		return wrap(err)
	}
	if err := ValidateJob(job); err != nil {
		return wrap(err)
	}
	dir := l.abs(checkpointRel(job, ckpt))
	switch err := l.fs.Remove(filepath.Join(dir, manifestName)); {
	case err == nil:
		if err := l.fs.SyncDir(dir); err != nil {
			return wrap(fmt.Errorf("fsync directory %s after removing the manifest: %w", dir, err))
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return wrap(ErrNotFound)
	default:
		return wrap(err)
	}
}

// DeleteManifest implements ManifestDeleter: the checkpoint is no longer
// committed, its blob objects stay until Delete.
func (s *JetStream) DeleteManifest(ctx context.Context, job string, ckpt uint64) error {
	wrap := func(err error) error {
		return fmt.Errorf("delete manifest of checkpoint %d of job %q: %w", ckpt, job, err)
	}
	if err := s.check(ctx); err != nil {
		return wrap(err)
	}
	if err := ValidateJob(job); err != nil {
		return wrap(err)
	}
	obs, err := s.objectStore(ctx, job, false)
	if err != nil {
		return wrap(err)
	}
	manifest := objectName(ckpt, manifestName)
	if _, err := obs.GetInfo(ctx, manifest); err != nil {
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return wrap(ErrNotFound)
		}
		return wrap(fmt.Errorf("look up manifest object %s: %w", manifest, err))
	}
	if err := obs.Delete(ctx, manifest); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return wrap(fmt.Errorf("delete manifest object %s: %w", manifest, err))
	}
	return nil
}

// DeleteManifest implements ManifestDeleter on the primary; the local copy
// of the checkpoint's sections stays for the checkpoints that read them.
func (m *Mirror) DeleteManifest(ctx context.Context, job string, ckpt uint64) error {
	md, ok := m.Primary.(ManifestDeleter)
	if !ok {
		return fmt.Errorf("delete manifest of checkpoint %d of job %q: the primary store cannot delete a manifest alone", ckpt, job)
	}
	return md.DeleteManifest(ctx, job, ckpt)
}
