package weir

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// checkpointOptions turns a run's checkpoint configuration into the runtime's,
// opening the local store and loading the checkpoint to restore.
func checkpointOptions(ctx context.Context, p *plan.Job, cfg RunConfig) (actors.CheckpointOptions, func(), error) {
	var co actors.CheckpointOptions
	c := cfg.Checkpoint
	if c.Mode == "" || c.Mode == CheckpointNone {
		if cfg.Restore != "" {
			return co, nil, fmt.Errorf("--restore needs checkpoints (mode is %q)", CheckpointNone)
		}
		return co, func() {}, nil
	}
	switch c.Mode {
	case CheckpointAligned:
		co.Mode = barriers.Aligned
	case CheckpointUnaligned:
		co.Mode = barriers.Unaligned
		if c.AlignedTimeout > 0 {
			return co, nil, fmt.Errorf("aligned timeout %v needs checkpoint mode aligned", c.AlignedTimeout)
		}
	default:
		if _, err := ParseCheckpointMode(string(c.Mode)); err != nil {
			return co, nil, err
		}
	}
	d := DefaultCheckpointConfig()
	co.Interval, co.Timeout, co.AlignedTimeout, co.Retain = c.Interval, c.Timeout, c.AlignedTimeout, c.Retain
	if co.Interval == 0 {
		co.Interval = d.Interval
	}
	if co.Timeout == 0 {
		co.Timeout = d.Timeout
	}
	if co.Retain == 0 {
		co.Retain = d.Retain
	}
	dir := c.StateDir
	if dir == "" {
		dir = d.StateDir
	}
	st, err := store.NewLocal(dir)
	if err != nil {
		return co, nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	co.Store = st
	closeStore := func() { st.Close() }
	if cfg.Restore != "" {
		m, err := loadManifest(ctx, st, p.Name, cfg.Restore)
		if err != nil {
			closeStore()
			return co, nil, fmt.Errorf("restore %s from %s: %w", cfg.Restore, dir, err)
		}
		co.Restore = m
		return co, closeStore, nil
	}
	first, err := nextCheckpointID(ctx, st, p.Name)
	if err != nil {
		closeStore()
		return co, nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	co.FirstID = first
	return co, closeStore, nil
}

// loadManifest finds checkpoint "latest" or an id of job.
func loadManifest(ctx context.Context, st store.Store, job, which string) (*store.Manifest, error) {
	if which == "latest" {
		m, err := st.Latest(ctx, job)
		if m != nil {
			return m, nil // err may report skipped corrupt manifests; the newest valid one is used
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("job %q has no completed checkpoint: %w", job, err)
		}
		return nil, err
	}
	id, err := strconv.ParseUint(which, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q is neither \"latest\" nor a number", which)
	}
	return st.Manifest(ctx, job, id)
}

// nextCheckpointID is one past every checkpoint id the store holds for job, so
// a fresh run never reuses an id of an earlier one.
func nextCheckpointID(ctx context.Context, st *store.Local, job string) (uint64, error) {
	ids, err := st.List(ctx, job)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrCorrupt) {
		return 0, err
	}
	more, err := st.Uncommitted(ctx, job)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	next := uint64(1)
	for _, id := range append(ids, more...) {
		next = max(next, id+1)
	}
	return next, nil
}
