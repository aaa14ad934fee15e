package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// readManifestFunc reads and verifies the manifest of one checkpoint of a job.
type readManifestFunc func(ctx context.Context, ckpt uint64) (*Manifest, error)

// listValid reads the manifest of every candidate checkpoint and returns the
// ones that verify, ascending. Manifests that fail verification are skipped
// and reported as a *CorruptManifestsError next to the result; a manifest
// that vanished meanwhile (concurrent Delete) is skipped silently; any other
// error aborts.
func listValid(ctx context.Context, job string, candidates []uint64, read readManifestFunc) ([]uint64, error) {
	ids := slices.Clone(candidates)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	valid := make([]uint64, 0, len(ids))
	var corrupt *CorruptManifestsError
	for _, id := range ids {
		_, err := read(ctx, id)
		switch {
		case err == nil:
			valid = append(valid, id)
		case errors.Is(err, ErrCorrupt):
			corrupt = addCorrupt(corrupt, job, id, err)
		case errors.Is(err, ErrNotFound):
		default:
			return nil, fmt.Errorf("list checkpoints of job %q: %w", job, err)
		}
	}
	if corrupt != nil {
		return valid, corrupt
	}
	return valid, nil
}

// latestValid returns the newest candidate whose manifest verifies, falling
// back past corrupt manifests (reported as a *CorruptManifestsError next to
// the result). Other read errors abort rather than silently fall back.
func latestValid(ctx context.Context, job string, candidates []uint64, read readManifestFunc) (*Manifest, error) {
	ids := slices.Clone(candidates)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var corrupt *CorruptManifestsError
	for i := len(ids) - 1; i >= 0; i-- {
		m, err := read(ctx, ids[i])
		switch {
		case err == nil:
			if corrupt != nil {
				return m, corrupt
			}
			return m, nil
		case errors.Is(err, ErrCorrupt):
			corrupt = addCorrupt(corrupt, job, ids[i], err)
		case errors.Is(err, ErrNotFound):
		default:
			return nil, fmt.Errorf("latest checkpoint of job %q: %w", job, err)
		}
	}
	if corrupt != nil {
		return nil, fmt.Errorf("latest checkpoint of job %q: no valid manifest: %w: %w", job, ErrNotFound, corrupt)
	}
	return nil, fmt.Errorf("latest checkpoint of job %q: no committed checkpoint: %w", job, ErrNotFound)
}

func addCorrupt(e *CorruptManifestsError, job string, id uint64, err error) *CorruptManifestsError {
	if e == nil {
		e = &CorruptManifestsError{Job: job}
	}
	e.Checkpoints = append(e.Checkpoints, id)
	e.Errs = append(e.Errs, err)
	return e
}

// uncommitted returns the candidates whose manifest is missing or corrupt,
// ascending.
func uncommitted(ctx context.Context, job string, candidates []uint64, read readManifestFunc) ([]uint64, error) {
	ids := slices.Clone(candidates)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []uint64
	for _, id := range ids {
		_, err := read(ctx, id)
		switch {
		case err == nil:
		case errors.Is(err, ErrCorrupt), errors.Is(err, ErrNotFound):
			out = append(out, id)
		default:
			return nil, fmt.Errorf("uncommitted checkpoints of job %q: %w", job, err)
		}
	}
	return out, nil
}
