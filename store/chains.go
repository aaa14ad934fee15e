package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// checkChain validates the chain of key group g in manifest m: a whole
// section then deltas, each written by a checkpoint no later than m and
// after the one before it, with valid blob names.
func checkChain(m *Manifest, g int, chain []ChainLink) error {
	if len(chain) == 0 {
		return fmt.Errorf("key group %d: empty chain", g)
	}
	var prev uint64
	for i, l := range chain {
		if err := ValidateBlobName(l.Ref.Name); err != nil {
			return fmt.Errorf("key group %d link %d: %w", g, i, err)
		}
		if l.Checkpoint == 0 || l.Checkpoint > m.CheckpointID || (i > 0 && l.Checkpoint <= prev) {
			return fmt.Errorf("key group %d link %d: written by checkpoint %d, after %d, in checkpoint %d: %w",
				g, i, l.Checkpoint, prev, m.CheckpointID, ErrInvalidName)
		}
		prev = l.Checkpoint
	}
	return nil
}

// ReferencedCheckpoints returns, ascending, the earlier checkpoints whose
// blobs m's key-group chains and channel-state parts read: they must be
// kept while m is.
func ReferencedCheckpoints(m *Manifest) []uint64 {
	seen := map[uint64]bool{}
	for _, t := range m.Tasks {
		for _, chain := range t.KeyGroupChains {
			for _, l := range chain {
				if l.Checkpoint != m.CheckpointID {
					seen[l.Checkpoint] = true
				}
			}
		}
	}
	channelPartCheckpoints(m, seen)
	out := make([]uint64, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// ManifestDeleter is a Store that can delete the manifest of a checkpoint
// alone, keeping its blobs: the checkpoint is gone (not listed, not
// restorable) while newer checkpoints still read sections of its blobs.
type ManifestDeleter interface {
	DeleteManifest(ctx context.Context, job string, ckpt uint64) error
}

// referencedBy returns the checkpoints the manifests of ids refer to.
func referencedBy(ctx context.Context, st Store, job string, ids []uint64) (map[uint64]bool, error) {
	refs := map[uint64]bool{}
	for _, id := range ids {
		m, err := st.Manifest(ctx, job, id)
		if err != nil {
			return nil, fmt.Errorf("read manifest of checkpoint %d for its references: %w", id, err)
		}
		for _, r := range ReferencedCheckpoints(m) {
			refs[r] = true
		}
	}
	return refs, nil
}

// Retired says what Retire did.
type Retired struct {
	Deleted []uint64 // deleted with their blobs, ascending
	Kept    []uint64 // manifest deleted, blobs kept: a retained checkpoint reads them
}

// Retire deletes checkpoints ids of job, which fell out of the retained
// ones, except the blobs a retained checkpoint still reads: such a
// checkpoint loses its manifest only and is deleted once no retained
// checkpoint reads it (the blobs, kept so, of checkpoints below the oldest
// retained one are checked again at each call). Manifests go first, blobs
// after, so no listed checkpoint ever reads deleted blobs, even if Retire
// is interrupted. A store that cannot delete a manifest alone keeps a
// checkpoint that a listed one reads whole. A retained manifest that
// cannot be read deletes no blobs: the error is returned.
func Retire(ctx context.Context, st Store, job string, ids, retained []uint64) (Retired, error) {
	var out Retired
	candidates := slices.Clone(ids)
	if u, ok := st.(UncommittedLister); ok && len(retained) > 0 {
		oldest := slices.Min(retained)
		kept, err := u.Uncommitted(ctx, job)
		if err != nil {
			return out, fmt.Errorf("retire checkpoints of job %q: %w", job, err)
		}
		for _, id := range kept {
			if id < oldest {
				candidates = append(candidates, id)
			}
		}
	}
	slices.Sort(candidates)
	candidates = slices.DeleteFunc(slices.Compact(candidates), func(id uint64) bool { return slices.Contains(retained, id) })
	var errs []error
	md, canHide := st.(ManifestDeleter)
	readers := retained
	if canHide {
		for _, id := range candidates {
			if err := md.DeleteManifest(ctx, job, id); err != nil && !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
		}
	} else {
		listed, err := st.List(ctx, job)
		var corrupt *CorruptManifestsError
		if err != nil && !errors.As(err, &corrupt) {
			return out, fmt.Errorf("retire checkpoints of job %q: %w", job, err)
		}
		readers = listed
	}
	refs, err := referencedBy(ctx, st, job, readers)
	if err != nil {
		return out, fmt.Errorf("retire checkpoints of job %q: %w", job, errors.Join(append(errs, err)...))
	}
	for _, id := range candidates {
		if refs[id] {
			out.Kept = append(out.Kept, id)
			continue
		}
		if err := st.Delete(ctx, job, id); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		out.Deleted = append(out.Deleted, id)
	}
	return out, errors.Join(errs...)
}

// referencedByCommitted returns the checkpoints that job's committed
// checkpoints (those List gives) read blobs of.
func referencedByCommitted(ctx context.Context, st Store, job string) (map[uint64]bool, error) {
	ids, err := st.List(ctx, job)
	var corrupt *CorruptManifestsError
	if err != nil && !errors.As(err, &corrupt) {
		return nil, err
	}
	return referencedBy(ctx, st, job, ids)
}
