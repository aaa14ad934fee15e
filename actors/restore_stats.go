package actors

import (
	"context"
	"sync"
	"time"

	"github.com/weirstream/weir/store"
)

// maxRestoreHistory bounds the restores a job remembers one by one.
const maxRestoreHistory = 256

// TaskRestore is one task's restore: from which checkpoint, and where its
// state came from (this node's local copy or the checkpoint store).
type TaskRestore struct {
	Task       string
	Checkpoint uint64
	Read       store.ReadStats
	// Took is the whole restore, reading and loading the state, from
	// Start.
	Took  time.Duration
	Start time.Time
}

// RestoreStats are a job's restores on this node: totals, and the most
// recent ones (at most maxRestoreHistory), oldest first.
type RestoreStats struct {
	Restores int
	Read     store.ReadStats // summed over all restores
	Took     time.Duration   // summed over all restores
	// First is when the earliest restore started and Last when the latest
	// one ended: tasks restore side by side, so Last − First is how long
	// the node took until every task restored had its state.
	First, Last time.Time
	History     []TaskRestore
}

// Span is Last − First: from the start of the first restore to the end of
// the last one.
func (s RestoreStats) Span() time.Duration { return s.Last.Sub(s.First) }

// restoreLog collects RestoreStats; safe for any goroutine.
type restoreLog struct {
	mu sync.Mutex
	s  RestoreStats
}

func (l *restoreLog) add(r TaskRestore) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.Restores++
	l.s.Read.Add(r.Read)
	l.s.Took += r.Took
	if l.s.First.IsZero() || r.Start.Before(l.s.First) {
		l.s.First = r.Start
	}
	if end := r.Start.Add(r.Took); end.After(l.s.Last) {
		l.s.Last = end
	}
	if len(l.s.History) == maxRestoreHistory {
		l.s.History = append(l.s.History[:0], l.s.History[1:]...)
	}
	l.s.History = append(l.s.History, r)
}

// Restores returns the job's restore figures on this node so far.
func (j *Job) Restores() RestoreStats {
	j.restLog.mu.Lock()
	defer j.restLog.mu.Unlock()
	s := j.restLog.s
	s.History = append([]TaskRestore(nil), s.History...)
	return s
}

// recordLocalSections indexes a stored task snapshot in this node's local
// copy when the job's store keeps one, so a restore finds its sections by
// what they hold. A failure only costs local reads later: it is logged.
func (t *task) recordLocalSections(ctx context.Context, id uint64, snap store.TaskSnapshot) {
	r, ok := t.job.opts.Checkpoint.Store.(store.SnapshotRecorder)
	if !ok {
		return
	}
	if err := r.RecordSnapshot(ctx, t.job.Plan.Name, id, snap); err != nil {
		t.log.Warn().Err(err).Uint64("checkpoint", id).Msg("index local copy of checkpoint state")
	}
}
