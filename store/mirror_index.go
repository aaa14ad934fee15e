package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// SnapshotRecorder is a Store that keeps a node-local copy of the blobs its
// tasks write and indexes it: after a task's blob is stored, the task hands
// over its manifest entry so the sections can be found again by what they
// hold (the Mirror).
type SnapshotRecorder interface {
	RecordSnapshot(ctx context.Context, job string, ckpt uint64, ts TaskSnapshot) error
}

// RecordSnapshot adds the sections of task snapshot ts (key groups,
// operator state, channel state) to the local index of checkpoint ckpt of
// job, for those whose local blob file is present with the size the
// references give. The index is rewritten atomically after the blobs it
// points into are durable. A damaged index is replaced (logged).
func (m *Mirror) RecordSnapshot(ctx context.Context, job string, ckpt uint64, ts TaskSnapshot) error {
	wrap := func(err error) error {
		return fmt.Errorf("record local sections of task %s[%d], job %q checkpoint %d: %w", ts.Operator, ts.Instance, job, ckpt, err)
	}
	if err := m.Local.check(ctx); err != nil {
		return wrap(err)
	}
	entries := snapshotEntries(ckpt, ts)
	blobs := heldBlobs{l: m.Local, job: job, present: map[LocalCheckpoint]map[string]bool{}}
	kept := entries[:0]
	for _, e := range entries {
		ok, err := blobs.has(ckpt, e.Ref)
		if err != nil {
			return wrap(err)
		}
		if ok {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	m.Local.indexMu.Lock()
	defer m.Local.indexMu.Unlock()
	x, err := m.Local.readIndex(job, ckpt)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			m.Log.Warn().Err(err).Str("job", job).Uint64("checkpoint", ckpt).Msg("local index damaged: replacing it")
		}
		x = &localIndex{Job: job, Checkpoint: ckpt}
	}
	x.merge(kept)
	if err := m.Local.writeIndex(x); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil // the checkpoint was deleted meanwhile
		}
		return wrap(err)
	}
	return nil
}

// snapshotEntries lists the sections of ts with their keys.
func snapshotEntries(ckpt uint64, ts TaskSnapshot) []indexEntry {
	var out []indexEntry
	for g, ref := range ts.KeyGroups {
		out = append(out, indexEntry{Key: KeyGroupKey(ts.Operator, g), Ref: ref})
	}
	for g, chain := range ts.KeyGroupChains {
		// The link this checkpoint wrote; earlier ones are in their own
		// checkpoints' indexes, named here so that the inventory can sum
		// the group's whole chain.
		if n := len(chain); n > 0 && chain[n-1].Checkpoint == ckpt {
			out = append(out, indexEntry{Key: KeyGroupKey(ts.Operator, g), Ref: chain[n-1].Ref, Chain: chain[: n-1 : n-1]})
		}
	}
	if ts.OperatorState != nil {
		out = append(out, indexEntry{Key: OperatorStateKey(ts.Operator, ts.Instance), Ref: *ts.OperatorState})
	}
	for _, c := range ts.Channels {
		// With parts, Blob is the section of the buffers this checkpoint
		// wrote (a later one's parts are ranges of it); none: no entry.
		if c.Blob.Name != "" {
			out = append(out, indexEntry{Key: ChannelKey(ts.Operator, ts.Instance, c.Input), Ref: c.Blob})
		}
	}
	return out
}

// blobSize is the size of a checkpoint's local blob file; a missing file
// wraps ErrNotFound.
func (l *Local) blobSize(job string, ckpt uint64, name string) (int64, error) {
	if err := ValidateJob(job); err != nil {
		return 0, err
	}
	if err := ValidateBlobName(name); err != nil {
		return 0, err
	}
	fi, err := l.fs.Stat(l.abs(path.Join(checkpointRel(job, ckpt), name)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("local blob %q: %w", name, ErrNotFound)
		}
		return 0, fmt.Errorf("stat local blob %q: %w", name, err)
	}
	return fi.Size(), nil
}
