package store

import (
	"context"
	"errors"

	"github.com/rs/zerolog"
)

// Mirror is the store of a cluster node: every blob and manifest goes to the
// shared primary store (the cluster's JetStream object store) and a copy of
// what this node writes stays in its working directory (Local). Reads prefer
// the local copy and fall back to the primary when the copy is missing or
// fails its checksum, so a node restarted with the same working directory
// restores from its own disk. Which checkpoints exist is the primary's say.
type Mirror struct {
	Primary Store
	Local   *Local
	Log     zerolog.Logger
}

// PutBlob implements Store: the primary first (that write decides), then the
// local copy (a failed copy is logged; the primary still has the blob).
func (m *Mirror) PutBlob(ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error) {
	ref, err := m.Primary.PutBlob(ctx, job, ckpt, name, data)
	if err != nil {
		return ref, err
	}
	if _, err := m.Local.PutBlob(ctx, job, ckpt, name, data); err != nil {
		m.Log.Warn().Err(err).Str("job", job).Uint64("checkpoint", ckpt).Str("blob", name).Msg("keep local copy of blob")
	}
	return ref, nil
}

// GetBlob implements Store: the local copy when it verifies, else the primary.
func (m *Mirror) GetBlob(ctx context.Context, job string, ckpt uint64, ref BlobRef) ([]byte, error) {
	data, err := m.Local.GetBlob(ctx, job, ckpt, ref)
	if err == nil {
		return data, nil
	}
	if !errors.Is(err, ErrNotFound) {
		m.Log.Warn().Err(err).Str("job", job).Uint64("checkpoint", ckpt).Str("blob", ref.Name).Msg("local copy unusable: reading the shared store")
	}
	return m.Primary.GetBlob(ctx, job, ckpt, ref)
}

// CommitManifest implements Store: the primary commits the checkpoint; the
// local copy of the manifest is best effort.
func (m *Mirror) CommitManifest(ctx context.Context, mf *Manifest) error {
	if err := m.Primary.CommitManifest(ctx, mf); err != nil {
		return err
	}
	if err := m.Local.CommitManifest(ctx, mf); err != nil {
		m.Log.Warn().Err(err).Str("job", mf.Job).Uint64("checkpoint", mf.CheckpointID).Msg("keep local copy of manifest")
	}
	return nil
}

// Manifest implements Store (from the primary).
func (m *Mirror) Manifest(ctx context.Context, job string, ckpt uint64) (*Manifest, error) {
	return m.Primary.Manifest(ctx, job, ckpt)
}

// Latest implements Store (from the primary).
func (m *Mirror) Latest(ctx context.Context, job string) (*Manifest, error) {
	return m.Primary.Latest(ctx, job)
}

// List implements Store (from the primary).
func (m *Mirror) List(ctx context.Context, job string) ([]uint64, error) {
	return m.Primary.List(ctx, job)
}

// Delete implements Store: the primary, then the local copy if there is one.
func (m *Mirror) Delete(ctx context.Context, job string, ckpt uint64) error {
	err := m.Primary.Delete(ctx, job, ckpt)
	if lerr := m.deleteLocal(ctx, job, ckpt); lerr != nil && !errors.Is(lerr, ErrNotFound) {
		m.Log.Warn().Err(lerr).Str("job", job).Uint64("checkpoint", ckpt).Msg("delete local copy")
	}
	return err
}

// deleteLocal deletes the local copy of a checkpoint, index included, never
// while its index is being rewritten (which would bring the checkpoint's
// directory back).
func (m *Mirror) deleteLocal(ctx context.Context, job string, ckpt uint64) error {
	m.Local.indexMu.Lock()
	defer m.Local.indexMu.Unlock()
	return m.Local.Delete(ctx, job, ckpt)
}

// Close implements Store: closes both stores; idempotent.
func (m *Mirror) Close() error {
	return errors.Join(m.Primary.Close(), m.Local.Close())
}

// PruneLocal drops this node's copies of checkpoints ids (deleted by the
// job's coordinator from the shared store).
func (m *Mirror) PruneLocal(ctx context.Context, job string, ids []uint64) error {
	var errs []error
	for _, id := range ids {
		if err := m.deleteLocal(ctx, job, id); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Uncommitted implements UncommittedLister (from the primary, when it can list).
func (m *Mirror) Uncommitted(ctx context.Context, job string) ([]uint64, error) {
	u, ok := m.Primary.(UncommittedLister)
	if !ok {
		return nil, nil
	}
	return u.Uncommitted(ctx, job)
}
