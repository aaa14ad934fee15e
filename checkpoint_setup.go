package weir

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rs/zerolog"

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
	var opts []store.LocalOption
	if cfg.Checkpoint.DirectWrites {
		opts = append(opts, store.WithDirectWrites())
	}
	st, err := store.NewLocal(dir, opts...)
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
	co.SyncSnapshots = c.SyncSnapshots
	co.Incremental = !c.FullCheckpoints && !c.SyncSnapshots
	co.MaxDeltas, co.CompactRatio = c.IncrementalMaxDeltas, c.IncrementalCompactRatio
	co.MaxConcurrent = max(1, c.MaxConcurrent)
	co.MaxInflightBytes = c.MaxInflightBytes
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
// restore (cfg.Restore: "latest" or an id; "" for a fresh start). New checkpoint ids
// continue after every id st holds, restored or not, so no checkpoint is
// ever overwritten. Restoring a checkpoint abandons the checkpoints after it:
// they are deleted (each with a log line), since the output they committed
// is rolled back. A store the run owns (a state directory always; a cluster
// job's bucket when owns says the caller is its lease-holding coordinator) is
// also swept of checkpoints that never completed. A source that
// cfg.OperatorParallelism names at another parallelism than the checkpoint's
// is refused (a source without splits resumes at its checkpoint's parallelism).
func withStore(ctx context.Context, p *plan.Job, co actors.CheckpointOptions, cfg RunConfig, st store.Store) (actors.CheckpointOptions, error) {
	restore, owns, log := cfg.Restore, cfg.OwnsStore, cfg.Logger
	co.Store = st
	if restore != "" {
		m, err := loadManifest(ctx, st, p.Name, restore, cfg.HeldByNodes, log)
		var rp actors.RestorePlan
		if err == nil {
			// Before anything is deleted: a checkpoint of another graph or
			// maxParallelism is a mistake on the command line.
			rp, err = actors.PlanRestore(p, m)
		}
		if err == nil {
			err = refusePinnedSources(rp, cfg.OperatorParallelism, m.CheckpointID)
		}
		if err != nil {
			return co, fmt.Errorf("restore %s: %w", restore, err)
		}
		rp.Apply(p)
		logRestorePlan(log, m.CheckpointID, rp)
		co.Restore = m
	}
	first, err := nextCheckpointID(ctx, st, p.Name)
	if err != nil {
		return co, err
	}
	co.FirstID = first
	if co.Restore != nil {
		if err := dropNewer(ctx, st, p.Name, co.Restore.CheckpointID, log); err != nil {
			return co, fmt.Errorf("restore %s: %w", restore, err)
		}
	}
	if _, local := st.(*store.Local); local || owns {
		// Nothing else writes the job's checkpoints before its run starts.
		if err := sweep(ctx, st, p.Name, first, log); err != nil {
			return co, err
		}
	}
	return co, nil
}

// sweep deletes the checkpoints of job below first that have no valid
// manifest: aborted or interrupted ones (logged together) and ones whose
// manifest is corrupt (each logged as a warning with the cause).
func sweep(ctx context.Context, st store.Store, job string, first uint64, log zerolog.Logger) error {
	causes := map[uint64]error{}
	var corrupt *store.CorruptManifestsError
	if _, err := st.List(ctx, job); errors.As(err, &corrupt) {
		for i, id := range corrupt.Checkpoints {
			causes[id] = corrupt.Errs[i]
		}
	}
	swept, err := store.DeleteUncommitted(ctx, st, job, first)
	var incomplete []uint64
	for _, id := range swept {
		if cause, ok := causes[id]; ok {
			log.Warn().Uint64("checkpoint", id).AnErr("cause", cause).Msg("deleted a checkpoint whose manifest fails verification")
		} else {
			incomplete = append(incomplete, id)
		}
	}
	if len(incomplete) > 0 {
		log.Info().Uints64("checkpoints", incomplete).Msg("deleted checkpoints that never completed")
	}
	return err
}

// dropNewer deletes the completed checkpoints of job newer than restored:
// restoring an older checkpoint rolls the job and its committed output back
// to it, so they belong to a history that no longer holds and must not be
// restored later (not by "latest" either).
func dropNewer(ctx context.Context, st store.Store, job string, restored uint64, log zerolog.Logger) error {
	ids, err := st.List(ctx, job)
	if err != nil && !errors.Is(err, store.ErrCorrupt) {
		return err
	}
	for _, id := range ids {
		if id <= restored {
			continue
		}
		log.Warn().Uint64("checkpoint", id).Uint64("restored", restored).
			Msg("deleting a checkpoint newer than the restored one: the restore rolls back what it committed")
		if err := st.Delete(ctx, job, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete checkpoint %d, newer than the restored %d: %w", id, restored, err)
		}
	}
	return nil
}

// RuntimeFor returns the runtime options Run would use for cfg, with st as
// the checkpoint store (a cluster's shared store) instead of a state
// directory, and configures g's plan for them (parallelisms, key-group
// tables). It loads the checkpoint named by cfg.Restore from st.
func RuntimeFor(ctx context.Context, g *Graph, cfg RunConfig, st store.Store) (actors.Options, error) {
	p, err := g.plan()
	if err != nil {
		return cfg.Runtime, err
	}
	return runtimeFor(ctx, p, cfg, st)
}

// runtimeFor is RuntimeFor of a checked plan.
func runtimeFor(ctx context.Context, p *plan.Job, cfg RunConfig, st store.Store) (actors.Options, error) {
	rt := cfg.Runtime
	co, err := checkpointSettings(cfg)
	if err != nil {
		return rt, err
	}
	if err := applyOperatorParallelism(p, cfg.OperatorParallelism); err != nil {
		return rt, err
	}
	if co.Enabled() {
		if co, err = withStore(ctx, p, co, cfg, st); err != nil {
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

// loadManifest finds checkpoint "latest" or an id of job and verifies every
// blob it refers to. "latest" is the newest intact checkpoint: a newer one
// whose manifest or blobs fail verification is skipped with a warning naming
// it and what failed. An explicit id that fails verification is an error
// naming the checkpoint, and the task and key group of a broken blob.
func loadManifest(ctx context.Context, st store.Store, job, which string, heldBy func(uint64, string, int) bool, log zerolog.Logger) (*store.Manifest, error) {
	verify := func(m *store.Manifest) error {
		var held func(string, int) bool
		if heldBy != nil {
			held = func(op string, g int) bool { return heldBy(m.CheckpointID, op, g) }
		}
		start := time.Now()
		v, err := store.VerifyCheckpointExcept(ctx, st, m, held)
		if err == nil {
			log.Info().Uint64("checkpoint", m.CheckpointID).Int64("bytes", v.Bytes).Int("sections", v.Sections).
				Int64("held_bytes", v.HeldBytes).Int("held_sections", v.HeldSections).Dur("took", time.Since(start)).
				Msg("checkpoint to restore verified")
		}
		return err
	}
	if which != "latest" {
		id, err := strconv.ParseUint(which, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %q is neither \"latest\" nor a number", which)
		}
		m, err := st.Manifest(ctx, job, id)
		if err != nil {
			return nil, err
		}
		if err := verify(m); err != nil {
			return nil, err
		}
		return m, nil
	}
	ids, err := st.List(ctx, job)
	var corrupt *store.CorruptManifestsError
	if err != nil && !errors.As(err, &corrupt) {
		return nil, err
	}
	skipped := 0
	var newestErr error // why the newest skipped checkpoint failed verification
	warnSkipped := func(newerThan uint64) {
		if corrupt == nil {
			return
		}
		for i, id := range corrupt.Checkpoints {
			if id > newerThan {
				skipped++
				log.Warn().Uint64("checkpoint", id).AnErr("cause", corrupt.Errs[i]).
					Msg("skipping a checkpoint for restore latest: its manifest fails verification")
			}
		}
	}
	for i := len(ids) - 1; i >= 0; i-- {
		m, err := st.Manifest(ctx, job, ids[i])
		if err == nil {
			err = verify(m)
		}
		switch {
		case err == nil:
			warnSkipped(ids[i])
			return m, nil
		case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrNotFound):
			skipped++
			if newestErr == nil {
				newestErr = err
			}
			log.Warn().Uint64("checkpoint", ids[i]).AnErr("cause", err).
				Msg("skipping a checkpoint for restore latest: it fails verification")
		default:
			return nil, err
		}
	}
	warnSkipped(0)
	if newestErr != nil {
		// Both causes stay visible to errors.Is: nothing to restore, and why
		// the newest candidate was refused (corruption names its section).
		return nil, fmt.Errorf("job %q has no intact checkpoint (%d failed verification; the newest: %w): %w",
			job, skipped, newestErr, store.ErrNotFound)
	}
	if skipped > 0 {
		return nil, fmt.Errorf("job %q has no intact checkpoint (%d failed verification): %w", job, skipped, store.ErrNotFound)
	}
	return nil, fmt.Errorf("job %q has no completed checkpoint: %w", job, store.ErrNotFound)
}

// nextCheckpointID is one past every checkpoint id the store holds for job, so
// a fresh run never reuses an id of an earlier one.
func nextCheckpointID(ctx context.Context, st store.Store, job string) (uint64, error) {
	ids, err := st.List(ctx, job)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrCorrupt) {
		return 0, err
	}
	var more []uint64
	if u, ok := st.(store.UncommittedLister); ok {
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

// refusePinnedSources refuses a restore that asks, by name, for a source
// without splits at another parallelism than its checkpoint's: its position
// is one offset per instance, which no instance at another parallelism can
// take over. (Asked for through the job-wide parallelism, the source keeps
// its checkpoint's, with a warning.) A source read by splits (Generate,
// FromSplitSource) is never pinned.
func refusePinnedSources(rp actors.RestorePlan, set map[string]int, checkpoint uint64) error {
	for _, o := range rp.Operators {
		if n, named := set[o.Name]; named && o.Pinned {
			return fmt.Errorf("checkpoint %d ran source %q at parallelism %d: a source resumes only at its checkpoint's parallelism (its offsets are per instance; only a source read by splits rescales), not at %d",
				checkpoint, o.Name, o.From, n)
		}
	}
	return nil
}

// ApplyRestorePlan sets g's parallelisms and key-group tables to those a run
// restoring checkpoint id from st uses (RuntimeFor with that restore), without
// verifying the checkpoint's blobs or changing the store. A cluster node
// preparing its part of a restored job calls it after RuntimeFor without a
// restore, so that its tasks route records and own key groups as the
// coordinator's plan says.
func ApplyRestorePlan(ctx context.Context, g *Graph, cfg RunConfig, st store.Store, id uint64) error {
	p, err := g.plan()
	if err != nil {
		return err
	}
	m, err := st.Manifest(ctx, p.Name, id)
	if err != nil {
		return fmt.Errorf("restore plan of checkpoint %d: %w", id, err)
	}
	rp, err := actors.PlanRestore(p, m)
	if err == nil {
		err = refusePinnedSources(rp, cfg.OperatorParallelism, id)
	}
	if err != nil {
		return fmt.Errorf("restore plan: %w", err)
	}
	rp.Apply(p)
	return nil
}
