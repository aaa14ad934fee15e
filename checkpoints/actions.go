package checkpoints

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Action is one thing the coordinator actor must do, in the order returned.
// The set is sealed: Trigger, WriteManifest, Completed, Aborted, Delete,
// FinalDone, StopDone and Ignored.
type Action interface {
	action()
	String() string
}

// Trigger starts checkpoint ID: inject its barriers at the sources. Final
// marks the last checkpoint of a job whose input has ended (always aligned);
// Stop marks the checkpoint a stopping job is to be restored from: sources
// stop reading at its barrier.
type Trigger struct {
	ID    uint64
	Final bool
	Stop  bool
}

// WriteManifest says every task acknowledged checkpoint ID: write its
// manifest durably, then call OnManifestWritten (or OnManifestFailed).
type WriteManifest struct{ ID uint64 }

// Completed says checkpoint ID is durable: notify the tasks so sinks commit.
// Duration is the time from trigger to completion.
type Completed struct {
	ID       uint64
	Duration time.Duration
	Final    bool
	Stop     bool
}

// Aborted says checkpoint ID failed (timeout, decline, manifest write): tell
// the tasks to drop it and discard whatever was stored for it.
type Aborted struct {
	ID     uint64
	Reason string
}

// Delete lists retained checkpoints that fell out of the newest Retain, oldest
// first: delete their manifests and data.
type Delete struct{ IDs []uint64 }

// FinalDone says the final checkpoint ID completed: the job may finish.
type FinalDone struct{ ID uint64 }

// StopDone says the stop checkpoint ID completed: the job may stop once its
// sinks committed it.
type StopDone struct{ ID uint64 }

// Ignored reports an event dropped as invalid, such as an acknowledgement
// from a task that is not part of the job or for a checkpoint never
// triggered; it is for logs and metrics.
type Ignored struct {
	ID     uint64
	Task   task.ID
	Reason string
}

func (Trigger) action()       {}
func (WriteManifest) action() {}
func (Completed) action()     {}
func (Aborted) action()       {}
func (Delete) action()        {}
func (FinalDone) action()     {}
func (StopDone) action()      {}
func (Ignored) action()       {}

// String renders the action for logs and scripted tests.
func (a Trigger) String() string {
	switch {
	case a.Final:
		return fmt.Sprintf("Trigger(%d, final)", a.ID)
	case a.Stop:
		return fmt.Sprintf("Trigger(%d, stop)", a.ID)
	}
	return fmt.Sprintf("Trigger(%d)", a.ID)
}

// String renders the action for logs and scripted tests.
func (a WriteManifest) String() string { return fmt.Sprintf("WriteManifest(%d)", a.ID) }

// String renders the action for logs and scripted tests.
func (a Completed) String() string {
	switch {
	case a.Final:
		return fmt.Sprintf("Completed(%d, %v, final)", a.ID, a.Duration)
	case a.Stop:
		return fmt.Sprintf("Completed(%d, %v, stop)", a.ID, a.Duration)
	}
	return fmt.Sprintf("Completed(%d, %v)", a.ID, a.Duration)
}

// String renders the action for logs and scripted tests.
func (a Aborted) String() string { return fmt.Sprintf("Aborted(%d, %q)", a.ID, a.Reason) }

// String renders the action for logs and scripted tests.
func (a Delete) String() string { return fmt.Sprintf("Delete(%v)", a.IDs) }

// String renders the action for logs and scripted tests.
func (a FinalDone) String() string { return fmt.Sprintf("FinalDone(%d)", a.ID) }

// String renders the action for logs and scripted tests.
func (a StopDone) String() string { return fmt.Sprintf("StopDone(%d)", a.ID) }

// String renders the action for logs and scripted tests.
func (a Ignored) String() string { return fmt.Sprintf("Ignored(%d, %v, %q)", a.ID, a.Task, a.Reason) }
