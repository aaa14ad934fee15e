package weir

import (
	"fmt"
	"time"
)

// CheckpointMode says how barriers travel.
type CheckpointMode string

const (
	// CheckpointNone takes no checkpoints.
	CheckpointNone CheckpointMode = "none"
	// CheckpointAligned blocks each input at its barrier until all inputs have it.
	CheckpointAligned CheckpointMode = "aligned"
	// CheckpointUnaligned lets barriers overtake queued data, which is stored with
	// the checkpoint.
	CheckpointUnaligned CheckpointMode = "unaligned"
)

// ParseCheckpointMode parses none, aligned or unaligned.
func ParseCheckpointMode(s string) (CheckpointMode, error) {
	switch m := CheckpointMode(s); m {
	case CheckpointNone, CheckpointAligned, CheckpointUnaligned:
		return m, nil
	}
	return "", fmt.Errorf("unknown checkpoint mode %q (want none, aligned or unaligned)", s)
}

// CheckpointConfig configures checkpoints of a run.
type CheckpointConfig struct {
	Mode CheckpointMode
	// Interval is the time between the end of one checkpoint and the next trigger.
	Interval time.Duration
	// Timeout aborts a checkpoint that is not complete after this long.
	Timeout time.Duration
	// AlignedTimeout > 0 (with Aligned) switches a checkpoint to unaligned after it.
	AlignedTimeout time.Duration
	// Retain is how many completed checkpoints are kept.
	Retain int
	// MaxConcurrent is how many checkpoints may be in flight at once (0
	// means 1): the next one may start before older ones are written; they
	// complete in the order of their ids.
	MaxConcurrent int
	// MaxInflightBytes > 0 bounds per task the data a checkpoint holds back
	// at blocked inputs (above it an aligned checkpoint switches to
	// unaligned) and the data an overtaking barrier brings before the task's
	// snapshot (above it that input falls back to alignment).
	MaxInflightBytes int64
	// StateDir is the local directory of the snapshot store.
	StateDir string
	// DirectWrites writes the snapshot store's blobs past the page cache
	// (direct I/O, on Linux where the file system allows it; elsewhere
	// through the cache as usual): storing a checkpoint then neither copies
	// it into the page cache nor leaves dirty pages for the kernel to write
	// back and reclaim while the job runs. A restore reads the blobs from
	// the disk rather than from the cache.
	DirectWrites bool
	// SyncSnapshots encodes keyed state on the task at the barrier instead
	// of taking a copy-on-write view there and encoding it off the task.
	SyncSnapshots bool
	// FullCheckpoints writes every key group whole at every checkpoint.
	// By default (false) checkpoints are incremental: a key group whose
	// state changed since the last completed checkpoint is written as a
	// delta (its changed and deleted keys) on the sections already stored.
	// Incremental checkpoints need asynchronous snapshots: with
	// SyncSnapshots every checkpoint is written whole whatever this says.
	FullCheckpoints bool
	// IncrementalMaxDeltas bounds a key group's chain: after this many
	// deltas on its whole section the group is due to be written whole
	// again (0: 32). Of the due groups a task writes at most 1/this of its
	// groups whole per checkpoint, the most grown first, so that groups
	// written whole together are not rewritten together; a chain twice over
	// either limit is written whole at once.
	IncrementalMaxDeltas int
	// IncrementalCompactRatio makes a key group due to be written whole
	// again once the entries its deltas overwrote or deleted are more than
	// this fraction of its live keys (0: 0.5); deltas that only add keys
	// (a fill spread over checkpoints) do not count. For state whose
	// snapshots do not count their entries, its deltas' bytes count
	// against its whole section's instead.
	IncrementalCompactRatio float64
}

// DefaultCheckpointConfig is what `node run` uses unless told otherwise:
// unaligned checkpoints every second, asynchronous and incremental (its
// zero SyncSnapshots and FullCheckpoints), keeping 3.
func DefaultCheckpointConfig() CheckpointConfig {
	return CheckpointConfig{Mode: CheckpointUnaligned, Interval: time.Second, Timeout: 30 * time.Second, Retain: 3, MaxConcurrent: 1, StateDir: "./weir-state"}
}

// CheckpointStat describes one completed checkpoint of a run.
type CheckpointStat struct {
	ID          uint64        `json:"id"`
	Mode        string        `json:"mode"`
	Duration    time.Duration `json:"-"`
	DurationMs  float64       `json:"duration_ms"`
	AlignmentMs float64       `json:"alignment_ms"`
	// StateBytes is the full size of the state the checkpoint restores
	// from; StateWrittenBytes what it wrote (less with incremental
	// checkpoints).
	StateBytes        int64 `json:"state_bytes"`
	StateWrittenBytes int64 `json:"state_written_bytes"`
	InflightBytes     int64 `json:"inflight_bytes"` // channel state written
	// InflightRefBytes is channel state referred to in earlier checkpoints'
	// blobs instead of written again (buffers queued since then).
	InflightRefBytes int64 `json:"inflight_ref_bytes"`
	InflightBuffers  int64 `json:"inflight_buffers"`
	Final            bool  `json:"final,omitempty"`
}
