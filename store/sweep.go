package store

import (
	"context"
	"errors"
	"fmt"
)

// UncommittedLister is a Store that can list the checkpoints of a job that
// hold stored data but no manifest that verifies: aborted checkpoints, ones a
// crash interrupted, and ones whose manifest is corrupt.
type UncommittedLister interface {
	Uncommitted(ctx context.Context, job string) ([]uint64, error)
}

// DeleteUncommitted deletes every checkpoint of job below id `below` that
// holds data but no manifest that verifies and whose blobs no committed
// checkpoint reads, and returns the ids it deleted,
// ascending. A checkpoint whose manifest verifies is never deleted; `below`
// keeps the checkpoint being written (and any later one) out of reach, so a
// caller passes the smallest id that may still be written. A store that
// cannot list such checkpoints deletes nothing.
func DeleteUncommitted(ctx context.Context, st Store, job string, below uint64) ([]uint64, error) {
	u, ok := st.(UncommittedLister)
	if !ok {
		return nil, nil
	}
	ids, err := u.Uncommitted(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("delete uncommitted checkpoints of job %q: %w", job, err)
	}
	// Blobs whose manifest retention deleted stay while a committed
	// checkpoint reads them (Retire).
	refs, err := referencedByCommitted(ctx, st, job)
	if err != nil {
		return nil, fmt.Errorf("delete uncommitted checkpoints of job %q: %w", job, err)
	}
	var deleted []uint64
	for _, id := range ids {
		if id >= below {
			break
		}
		if refs[id] {
			continue
		}
		if err := st.Delete(ctx, job, id); err != nil && !errors.Is(err, ErrNotFound) {
			return deleted, fmt.Errorf("delete uncommitted checkpoints of job %q: %w", job, err)
		}
		deleted = append(deleted, id)
	}
	return deleted, nil
}
