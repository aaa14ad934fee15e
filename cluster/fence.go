package cluster

import "fmt"

// Fence is the receiving side of coordinator fencing: per job, the highest
// lease epoch a node has seen on a coordinator's command (or on any message
// of the job's parts, which carry the epoch of the coordinator that started
// them). A message from a lower epoch comes from a coordinator that was
// replaced, or from a part it started, and is refused. Fence is pure and not
// safe for concurrent use.
type Fence struct {
	highest map[string]uint64
}

// NewFence returns a fence that has seen no epoch yet.
func NewFence() *Fence { return &Fence{highest: make(map[string]uint64)} }

// Admit decides on a message of job stamped with epoch: it is refused when
// a higher epoch was seen for job (epoch 0, unstamped, is refused once any
// epoch was seen), admitted otherwise; a higher epoch becomes the job's
// highest. It returns the highest epoch seen after the decision.
func (f *Fence) Admit(job string, epoch uint64) (ok bool, highest uint64) {
	h := f.highest[job]
	if epoch < h || (epoch == 0 && h > 0) {
		return false, h
	}
	if epoch > h {
		f.highest[job] = epoch
	}
	return true, max(h, epoch)
}

// Highest is the highest epoch seen for job (0: none).
func (f *Fence) Highest(job string) uint64 { return f.highest[job] }

// FencedError is the reason a command from a replaced coordinator is refused.
func FencedError(job string, epoch, highest uint64) error {
	return fmt.Errorf("job %s: command of coordinator epoch %d refused: epoch %d seen: %w", job, epoch, highest, ErrFenced)
}
