package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// LocalCheckpoint names one checkpoint of a job in a node's local copy.
type LocalCheckpoint struct {
	Job        string
	Checkpoint uint64
}

// planReconcile decides which checkpoints of the local copy to delete,
// given what it holds (job → checkpoint ids), the primary store's committed
// checkpoints (job → ids; a job missing or empty there has none) and the
// jobs known to have ended or been cancelled:
//   - every checkpoint of an ended job, and of a job the primary has no
//     checkpoint of (unknown, ended and cleaned up, or never completed one);
//   - a checkpoint the primary does not hold that is older than its newest
//     (subsumed and deleted there, or aborted).
//
// A checkpoint the primary holds is kept, and so is one newer than its
// newest, which may still be completing. The result is sorted by job, then
// checkpoint.
func planReconcile(held, live map[string][]uint64, ended map[string]bool) []LocalCheckpoint {
	var out []LocalCheckpoint
	for job, ids := range held {
		keep := live[job]
		newest, any := uint64(0), len(keep) > 0
		for _, id := range keep {
			newest = max(newest, id)
		}
		for _, id := range ids {
			drop := ended[job] || !any || (id < newest && !slices.Contains(keep, id))
			if drop {
				out = append(out, LocalCheckpoint{Job: job, Checkpoint: id})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Job != out[j].Job {
			return out[i].Job < out[j].Job
		}
		return out[i].Checkpoint < out[j].Checkpoint
	})
	return out
}

// Reconcile makes the local copy follow the primary store, as a node does at
// start-up: it deletes the local state of ended jobs (the given ones, and
// jobs of which the primary holds no committed checkpoint) and of
// checkpoints the primary no longer holds (subsumed or aborted), see
// planReconcile. Call it before the node runs tasks: a job that has not
// completed a checkpoint yet counts as ended. A job whose checkpoints the
// primary cannot list is left alone and its error returned (joined with
// others) after the rest is reconciled. It returns what it deleted.
func (m *Mirror) Reconcile(ctx context.Context, ended ...string) ([]LocalCheckpoint, error) {
	jobs, err := m.Local.jobs()
	if err != nil {
		return nil, fmt.Errorf("reconcile local state: %w", err)
	}
	endedSet := map[string]bool{}
	for _, j := range ended {
		endedSet[j] = true
	}
	held := map[string][]uint64{}
	live := map[string][]uint64{}
	var errs []error
	for _, job := range jobs {
		ids, err := m.Local.checkpointIDs(job)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !endedSet[job] {
			l, err := m.primaryKeeps(ctx, job)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			live[job] = l
		}
		held[job] = ids
	}
	var deleted []LocalCheckpoint
	for _, c := range planReconcile(held, live, endedSet) {
		if err := m.deleteLocal(ctx, c.Job, c.Checkpoint); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, fmt.Errorf("reconcile local state: %w", err))
			continue
		}
		deleted = append(deleted, c)
		m.Log.Info().Str("job", c.Job).Uint64("checkpoint", c.Checkpoint).Msg("deleted local state the checkpoint store no longer holds")
	}
	for _, job := range jobs {
		m.Local.removeJobDirIfEmpty(job)
	}
	return deleted, errors.Join(errs...)
}

// primaryKeeps lists the checkpoints of job the primary store holds: those
// it lists and those whose blobs they read (incremental chains, channel
// state referred to again).
func (m *Mirror) primaryKeeps(ctx context.Context, job string) ([]uint64, error) {
	l, err := m.Primary.List(ctx, job)
	var corrupt *CorruptManifestsError
	if err != nil && !errors.As(err, &corrupt) {
		return nil, fmt.Errorf("reconcile local state of job %q: %w", job, err)
	}
	refs, err := referencedBy(ctx, m.Primary, job, l)
	if err != nil {
		return nil, fmt.Errorf("reconcile local state of job %q: %w", job, err)
	}
	for id := range refs {
		l = append(l, id)
	}
	return l, nil
}

// ReconcileJob makes the local copy of one running or ended job follow the
// primary store as Reconcile does, without deleting its retained
// checkpoints: a node calls it when its part of the job stops, since
// retention's last deletions may have been announced to parts that were
// already stopping. It returns what it deleted.
func (m *Mirror) ReconcileJob(ctx context.Context, job string) ([]LocalCheckpoint, error) {
	ids, err := m.Local.checkpointIDs(job)
	if err != nil {
		return nil, fmt.Errorf("reconcile local state of job %q: %w", job, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	keep, err := m.primaryKeeps(ctx, job)
	if err != nil {
		return nil, err
	}
	if len(keep) == 0 {
		return nil, nil // nothing to follow: a job without checkpoints there is Reconcile's to judge
	}
	var deleted []LocalCheckpoint
	var errs []error
	for _, c := range planReconcile(map[string][]uint64{job: ids}, map[string][]uint64{job: keep}, nil) {
		if err := m.deleteLocal(ctx, c.Job, c.Checkpoint); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, fmt.Errorf("reconcile local state: %w", err))
			continue
		}
		deleted = append(deleted, c)
	}
	return deleted, errors.Join(errs...)
}

// jobs lists the job directories of the store.
func (l *Local) jobs() ([]string, error) {
	if l.closed.Load() {
		return nil, ErrClosed
	}
	entries, err := l.fs.ReadDir(l.root)
	if err != nil {
		return nil, fmt.Errorf("list jobs in %s: %w", l.root, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && ValidateJob(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// removeJobDirIfEmpty removes a job's directory when nothing is left in it;
// it leaves a non-empty one alone.
func (l *Local) removeJobDirIfEmpty(job string) {
	entries, err := l.fs.ReadDir(l.abs(job))
	if err != nil || len(entries) > 0 {
		return
	}
	if l.fs.Remove(l.abs(job)) == nil {
		_ = l.fs.SyncDir(l.root)
	}
}
