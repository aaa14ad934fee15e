package rescale

import (
	"errors"
	"fmt"
	"time"
)

// ErrInputEnded is returned by Start, and carried by Refused, once the job's
// final checkpoint has completed: every source has read all its input and
// the job is finishing, so there is nothing left to rescale for.
var ErrInputEnded = errors.New("the job's input has ended")

// Refused says a rescale that waited for a checkpoint will not run: the
// checkpoint was the job's final one. Nothing was spawned or switched, so
// nothing is recovered; the shell answers the request with Err (which wraps
// ErrInputEnded) and lets the job finish.
type Refused struct {
	Rescale uint64
	Err     error
}

func (Refused) action() {}

func (a Refused) String() string {
	return fmt.Sprintf("refused rescale=%d reason=%q", a.Rescale, a.Err)
}

// FinalCheckpointCompleted records that checkpoint id, the job's final one,
// completed: the sources finish and the job ends once its output is
// committed. A rescale waiting for that checkpoint is refused (Refused,
// wrapping ErrInputEnded), and every later Start too. A rescale past its
// wait cannot meet it: no checkpoint starts until it commits or fails, so it
// commits before the final checkpoint is taken.
func (c *Coordinator) FinalCheckpointCompleted(now time.Duration, id uint64) []Action {
	c.inputEnded = id
	if id == c.checkpoint {
		c.checkpoint = 0
	}
	if c.phase != waiting {
		return nil
	}
	c.phase = idle
	return []Action{Refused{Rescale: c.plan.Input.Seq, Err: c.endedReason()}}
}

// endedReason is the error a rescale gets once the input has ended.
func (c *Coordinator) endedReason() error {
	return fmt.Errorf("the final checkpoint %d completed and the job is finishing: %w", c.inputEnded, ErrInputEnded)
}
