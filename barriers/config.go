package barriers

import (
	"fmt"
	"time"
)

// Mode selects how a task aligns the barriers of its inputs.
type Mode int

const (
	// Aligned blocks each input at its barrier until every input has it, then
	// snapshots; the checkpoint holds no channel state (unless AlignedTimeout
	// switches it to unaligned).
	Aligned Mode = iota + 1
	// Unaligned snapshots at the first barrier and stores the overtaken and
	// not-yet-aligned data as channel state.
	Unaligned
)

// String names the mode for logs and test output.
func (m Mode) String() string {
	switch m {
	case Aligned:
		return "aligned"
	case Unaligned:
		return "unaligned"
	default:
		return fmt.Sprintf("Mode(%d)", int(m))
	}
}

// Config describes the task an Aligner serves.
type Config struct {
	// Inputs is the number of input channels, numbered 0..Inputs-1 (>= 1).
	Inputs int
	// Mode is Aligned or Unaligned.
	Mode Mode
	// AlignedTimeout, if > 0 (Aligned mode only), switches a checkpoint to
	// unaligned when it has not aligned this long after its first barrier.
	AlignedTimeout time.Duration
	// ConsumedSeqs optionally gives, per input, the seq of the last buffer
	// already consumed before this Aligner took over (e.g. after a restore),
	// so the next buffer expected is ConsumedSeqs[i]+1. Nil means 0 for all.
	ConsumedSeqs []uint64
	// MaxConcurrent is how many checkpoints the coordinator has in flight at
	// once (0 means 1). With 1 a barrier of a new checkpoint supersedes
	// (aborts) the one in progress; with more, several are in progress and a
	// new one supersedes only older ones whose barrier on its input has not
	// arrived, which can no longer complete.
	MaxConcurrent int
	// MaxInflightBytes, if > 0, bounds the data a checkpoint holds back or
	// stores per task. An aligning checkpoint switches to unaligned once the
	// data queued behind its barriers at blocked inputs (OnBlockedBytes)
	// exceeds it. An overtaking barrier that would make the checkpoint
	// unaligned, met before its snapshot, whose overtaken data exceeds it
	// falls back to alignment on its input (AlignInput): the snapshot waits
	// until that input has processed its data up to the barrier.
	MaxInflightBytes int64
}

func (c Config) validate() error {
	if c.Inputs < 1 {
		return fmt.Errorf("inputs %d, need at least 1: %w", c.Inputs, ErrInvalidConfig)
	}
	if c.Mode != Aligned && c.Mode != Unaligned {
		return fmt.Errorf("mode %v: %w", c.Mode, ErrInvalidConfig)
	}
	if c.AlignedTimeout < 0 {
		return fmt.Errorf("aligned timeout %v is negative: %w", c.AlignedTimeout, ErrInvalidConfig)
	}
	if c.AlignedTimeout > 0 && c.Mode != Aligned {
		return fmt.Errorf("aligned timeout %v needs mode aligned, got %v: %w", c.AlignedTimeout, c.Mode, ErrInvalidConfig)
	}
	if c.MaxInflightBytes < 0 {
		return fmt.Errorf("max in-flight bytes %d is negative: %w", c.MaxInflightBytes, ErrInvalidConfig)
	}
	if c.MaxConcurrent < 0 {
		return fmt.Errorf("max concurrent checkpoints %d is negative: %w", c.MaxConcurrent, ErrInvalidConfig)
	}
	if c.ConsumedSeqs != nil && len(c.ConsumedSeqs) != c.Inputs {
		return fmt.Errorf("consumed seqs for %d inputs, have %d inputs: %w", len(c.ConsumedSeqs), c.Inputs, ErrInvalidConfig)
	}
	return nil
}
