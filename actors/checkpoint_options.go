package actors

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/store"
)

// CheckpointOptions turn checkpoints on for a job. The zero value takes none.
type CheckpointOptions struct {
	// Mode is barriers.Aligned or barriers.Unaligned; 0 takes no checkpoints.
	Mode barriers.Mode
	// Interval is the time between the end of one checkpoint and the next trigger.
	Interval time.Duration
	// Timeout aborts a checkpoint that is not complete after this long.
	Timeout time.Duration
	// AlignedTimeout > 0 (aligned mode) switches a checkpoint to unaligned after it.
	AlignedTimeout time.Duration
	// Retain is how many completed checkpoints are kept.
	Retain int
	// MaxConcurrent is how many checkpoints may be in flight at once (0
	// means 1); they complete in the order of their ids.
	MaxConcurrent int
	// MaxInflightBytes > 0 bounds per task the data a checkpoint holds back at
	// blocked inputs (above it an aligned checkpoint switches to unaligned)
	// and the data an overtaking barrier brings before the snapshot (above it
	// that input falls back to alignment).
	MaxInflightBytes int64
	// Store keeps the checkpoints.
	Store store.Store
	// Restore is the checkpoint to resume from, nil for a fresh start.
	Restore *store.Manifest
	// FirstID is the smallest id new checkpoints may use (ids of an earlier run
	// are never reused); when restoring, ids continue after the larger of
	// Restore's id and FirstID-1.
	FirstID uint64
	// SyncSnapshots encodes keyed state on the task's goroutine at the
	// barrier; by default a task takes a copy-on-write view there and the
	// encoding runs with the upload.
	SyncSnapshots bool
	// Incremental writes key groups as deltas on the sections of earlier
	// checkpoints (task_chains.go); it needs asynchronous snapshots.
	Incremental bool
	// MaxDeltas is how many deltas a key group's chain holds when the group
	// is due to be written whole again (0: DefaultMaxDeltas); at most
	// 1/MaxDeltas of a task's groups are, per checkpoint, unless a chain
	// reaches twice a limit (chainsToCompact).
	MaxDeltas int
	// CompactRatio makes a key group due to be written whole again once
	// its chain has grown by more than this fraction (groupChain.growth:
	// the entries its deltas overwrote against its live keys) (0:
	// DefaultCompactRatio).
	CompactRatio float64
}

// Enabled reports whether checkpoints are taken.
func (c CheckpointOptions) Enabled() bool { return c.Mode != 0 }

func (c CheckpointOptions) validate() error {
	if !c.Enabled() {
		if c.Restore != nil {
			return fmt.Errorf("restore needs checkpoints enabled")
		}
		return nil
	}
	switch {
	case c.Store == nil:
		return fmt.Errorf("checkpoints need a store")
	case c.Interval <= 0:
		return fmt.Errorf("checkpoint interval %v must be positive", c.Interval)
	case c.Timeout <= 0:
		return fmt.Errorf("checkpoint timeout %v must be positive", c.Timeout)
	case c.Retain < 1:
		return fmt.Errorf("retain %d must be at least 1", c.Retain)
	case c.MaxInflightBytes < 0:
		return fmt.Errorf("max in-flight bytes %d must not be negative", c.MaxInflightBytes)
	case c.MaxConcurrent < 0:
		return fmt.Errorf("max concurrent checkpoints %d must not be negative", c.MaxConcurrent)
	case c.Incremental && c.SyncSnapshots:
		return fmt.Errorf("incremental checkpoints need asynchronous snapshots")
	case c.MaxDeltas < 0:
		return fmt.Errorf("max deltas %d must not be negative", c.MaxDeltas)
	case c.CompactRatio < 0:
		return fmt.Errorf("compact ratio %v must not be negative", c.CompactRatio)
	case c.AlignedTimeout < 0:
		return fmt.Errorf("aligned timeout %v must not be negative", c.AlignedTimeout)
	case c.AlignedTimeout > 0 && c.Mode != barriers.Aligned:
		return fmt.Errorf("aligned timeout needs aligned mode")
	}
	return nil
}
