package actors

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/supervision"
)

// SupervisionOptions say how a job restarts failed regions. Restarts need
// checkpoints: without them a failure fails the job.
type SupervisionOptions struct {
	// MaxRestarts within Window are allowed (OTP intensity and period); one
	// more escalates and fails the job.
	MaxRestarts int
	Window      time.Duration
	// Backoff delays consecutive restarts.
	Backoff supervision.Backoff
	// ChaosKillEvery > 0 kills a random task or channel actor about this often.
	ChaosKillEvery time.Duration
	// ChaosSeed seeds the choice of victims and ways of killing.
	ChaosSeed int64
}

// DefaultSupervisionOptions allow 10 restarts a minute, 5 ms apart at first and
// at most 50 ms apart.
func DefaultSupervisionOptions() SupervisionOptions {
	return SupervisionOptions{MaxRestarts: 10, Window: time.Minute,
		Backoff: supervision.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond, Multiplier: 2}}
}

func (s SupervisionOptions) validate() error {
	switch {
	case s.MaxRestarts < 0:
		return fmt.Errorf("max restarts %d must not be negative", s.MaxRestarts)
	case s.MaxRestarts > 0 && s.Window <= 0:
		return fmt.Errorf("restart window %v must be positive", s.Window)
	case s.ChaosKillEvery < 0:
		return fmt.Errorf("chaos kill interval %v must not be negative", s.ChaosKillEvery)
	}
	return nil
}
