package barriers

import (
	"errors"
	"fmt"
)

// ErrNotAtBoundary is returned by Rebuild while a checkpoint is in progress:
// a task's input set may change only between checkpoints.
var ErrNotAtBoundary = errors.New("barriers: not at a checkpoint boundary")

// Rebuild gives the Aligner a new input set (a new plan changed the
// producers of the task: restore at another parallelism, a rescale), each
// input's last consumed seq in consumed (its length is the new number of
// inputs). It is valid only with no checkpoint in progress: it returns
// ErrNotAtBoundary otherwise, and an error wrapping ErrInvalidConfig for no
// inputs, changing nothing. Mode, timeout and the newest checkpoint done here
// (older barriers stay stale) are kept.
func (a *Aligner) Rebuild(consumed []uint64) error {
	if id, ok := a.InProgress(); ok {
		return fmt.Errorf("rebuild inputs with checkpoint %d in progress: %w", id, ErrNotAtBoundary)
	}
	cfg := a.cfg
	cfg.Inputs, cfg.ConsumedSeqs = len(consumed), consumed
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("rebuild inputs: %w", err)
	}
	a.cfg.Inputs = cfg.Inputs
	a.processed = append(make([]uint64, 0, len(consumed)), consumed...)
	a.blocked = make([]uint64, len(consumed))
	a.blockedBytes = make([]int64, len(consumed))
	a.held = make([]heldBarrier, len(consumed))
	a.free = nil // sized for the old inputs
	return nil
}
