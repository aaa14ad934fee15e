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
	// Took is the restore until the task runs, from Start: every section
	// read and verified, and handed to the instance.
	Took  time.Duration
	Start time.Time
	// Decoded is the restore until every key group was decoded, from
	// Start: Took when the restore decoded them all itself, later when the
	// instance kept some encoded (decoded as the task runs); 0 until then.
	Decoded time.Duration
}

// RestoreStats are a job's restores on this node: totals, and the most
// recent ones (at most maxRestoreHistory), oldest first.
type RestoreStats struct {
	Restores int
	Read     store.ReadStats // summed over all restores
	Took     time.Duration   // summed over all restores
	// First is when the earliest restore started and Last when the latest
	// one ended: tasks restore side by side, so Last − First is how long
	// the node took until every task restored ran.
	First, Last time.Time
	// Decoded sums the restores' Decoded, and LastDecoded is when the
	// latest one had every key group decoded.
	Decoded     time.Duration
	LastDecoded time.Time
	// DecodedRestores counts the restores with every key group decoded
	// (at most Restores).
	DecodedRestores int
	History         []TaskRestore
}

// Span is Last − First: from the start of the first restore to the end of
// the last one.
func (s RestoreStats) Span() time.Duration { return s.Last.Sub(s.First) }

// DecodedSpan is LastDecoded − First: from the start of the first restore
// until the last one had every key group decoded.
func (s RestoreStats) DecodedSpan() time.Duration {
	if s.LastDecoded.IsZero() {
		return 0
	}
	return s.LastDecoded.Sub(s.First)
}

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
	if r.Decoded > 0 {
		l.noteDecoded(r.Start, r.Decoded)
	}
	if len(l.s.History) == maxRestoreHistory {
		l.s.History = append(l.s.History[:0], l.s.History[1:]...)
	}
	l.s.History = append(l.s.History, r)
}

// decoded records that the restore of task started at start had every key
// group decoded took after it started.
func (l *restoreLog) decoded(task string, start time.Time, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noteDecoded(start, took)
	for i := len(l.s.History) - 1; i >= 0; i-- {
		if h := &l.s.History[i]; h.Task == task && h.Start.Equal(start) {
			h.Decoded = took
			break
		}
	}
}

// noteDecoded adds a restore's decoding time; mu is held.
func (l *restoreLog) noteDecoded(start time.Time, took time.Duration) {
	l.s.DecodedRestores++
	l.s.Decoded += took
	if end := start.Add(took); end.After(l.s.LastDecoded) {
		l.s.LastDecoded = end
	}
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
