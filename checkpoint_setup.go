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

// openStateDir opens the local store of a run that takes checkpoints (nil
// when it takes none); the function closes it.
func openStateDir(cfg RunConfig) (store.Store, func(), error) {
	if cfg.Checkpoint.Mode == "" || cfg.Checkpoint.Mode == CheckpointNone {
		return nil, func() {}, nil
	}
	dir := cfg.Checkpoint.StateDir
	if dir == "" {
		dir = DefaultCheckpointConfig().StateDir
	}
	st, err := store.NewLocal(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	return st, func() { st.Close() }, nil
}

// checkpointSettings checks a run's checkpoint configuration and fills in
// defaults; the store is left to the caller.
func checkpointSettings(cfg RunConfig) (actors.CheckpointOptions, error) {
	var co actors.CheckpointOptions
	c := cfg.Checkpoint
	if c.Mode == "" || c.Mode == CheckpointNone {
		if cfg.Restore != "" {
			return co, fmt.Errorf("--restore needs checkpoints (mode is %q)", CheckpointNone)
		}
		return co, nil
	}
	switch c.Mode {
	case CheckpointAligned:
		co.Mode = barriers.Aligned
	case CheckpointUnaligned:
		co.Mode = barriers.Unaligned
		if c.AlignedTimeout > 0 {
			return co, fmt.Errorf("aligned timeout %v needs checkpoint mode aligned", c.AlignedTimeout)
		}
	default:
		if _, err := ParseCheckpointMode(string(c.Mode)); err != nil {
			return co, err
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
	return co, nil
}

// withStore sets st as the checkpoint store and loads the checkpoint to
// restore ("latest" or an id; "" for a fresh start, whose ids then continue
// after every id st holds).
func withStore(ctx context.Context, p *plan.Job, co actors.CheckpointOptions, restore string, st store.Store) (actors.CheckpointOptions, error) {
	co.Store = st
	if restore != "" {
		m, err := loadManifest(ctx, st, p.Name, restore)
		if err != nil {
			return co, fmt.Errorf("restore %s: %w", restore, err)
		}
		co.Restore = m
		return co, nil
	}
	first, err := nextCheckpointID(ctx, st, p.Name)
	if err != nil {
		return co, err
	}
	co.FirstID = first
	return co, nil
}

// RuntimeFor returns the runtime options Run would use for cfg, with st as
// the checkpoint store (a cluster's shared store) instead of a state
// directory. It loads the checkpoint named by cfg.Restore from st.
func RuntimeFor(ctx context.Context, p *plan.Job, cfg RunConfig, st store.Store) (actors.Options, error) {
	rt := cfg.Runtime
	co, err := checkpointSettings(cfg)
	if err != nil {
		return rt, err
	}
	if co.Enabled() {
		if co, err = withStore(ctx, p, co, cfg.Restore, st); err != nil {
			if l, ok := st.(*store.Local); ok {
				return rt, fmt.Errorf("state dir %s: %w", l.Dir(), err)
			}
			return rt, err
		}
	}
	rt.Checkpoint = co
	sup := DefaultSupervision()
	if cfg.Supervision != nil {
		sup = *cfg.Supervision
	}
	rt.Supervision = sup.runtime()
	return rt, nil
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
func nextCheckpointID(ctx context.Context, st store.Store, job string) (uint64, error) {
	ids, err := st.List(ctx, job)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrCorrupt) {
		return 0, err
	}
	var more []uint64
	if u, ok := st.(interface {
		Uncommitted(context.Context, string) ([]uint64, error)
	}); ok {
		if more, err = u.Uncommitted(ctx, job); err != nil && !errors.Is(err, store.ErrNotFound) {
			return 0, err
		}
	}
	next := uint64(1)
	for _, id := range append(ids, more...) {
		next = max(next, id+1)
	}
	return next, nil
}
