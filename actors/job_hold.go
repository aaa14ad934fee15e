package actors

import (
	"context"
	"fmt"
)

// holdCheckpointsMsg holds back a job's periodic checkpoints, or lets
// them go on; applied is closed once the coordinator did.
type holdCheckpointsMsg struct {
	on      bool
	applied chan struct{}
}

// HoldCheckpoints holds back the job's periodic checkpoints (on true) or
// lets them go on (false), and returns once its coordinator did: no
// checkpoint is triggered after a hold returns, so once
// CheckpointsInFlight is 0 none is in flight until the hold ends.
// Checkpoints in flight go on; the final and stop checkpoints are not held
// back. A job without checkpoints has nothing to hold. It is the job
// coordinator's: on a node that runs only a part of a cluster job it waits
// until ctx ends.
func (j *Job) HoldCheckpoints(ctx context.Context, on bool) error {
	m := &holdCheckpointsMsg{on: on, applied: make(chan struct{})}
	j.send(m)
	select {
	case <-m.applied:
		return nil
	case <-j.done:
		return fmt.Errorf("hold checkpoints: %w", j.endedErr())
	case <-ctx.Done():
		return fmt.Errorf("hold checkpoints: %w", ctx.Err())
	}
}

// CheckpointsInFlight is the number of the job's checkpoints triggered and
// not yet completed or aborted, as its coordinator last saw it.
func (j *Job) CheckpointsInFlight() int { return int(j.inFlight.Load()) }
