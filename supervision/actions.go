package supervision

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Action is one thing the job's supervising actor must do, in the order
// returned. The set is sealed: StopRegion, StopLocally, RestartRegion,
// RegionReady, RecordRecovery, FailJob and Ignored.
type Action interface {
	action()
	String() string
}

// StopRegion says the region's tasks and channels must stop now (a failure
// was detected in it, or the whole job restarts).
type StopRegion struct {
	Region int
	Tasks  []task.ID
	// Alive are the tasks still running (OnTaskStarted, not ended) that the
	// actor must stop; the region restarts once each reported its end.
	Alive []task.ID
	// Lost are the tasks of Alive whose node was lost: the actor stops their
	// stand-ins itself, as no node will confirm the stop.
	Lost []task.ID
}

// StopLocally says a task being stopped ran on a node now lost: the actor
// stops its stand-in itself and reports its end, as the node will not.
type StopLocally struct {
	Task task.ID
}

// RegionReady says every respawned task of the region reported ready: the
// actor wires and starts it; it runs again.
type RegionReady struct {
	Region int
	Tasks  []task.ID
}

// RecordRecovery reports the recovery time of a region: from its stop to the
// first record a task of it processed after running again.
type RecordRecovery struct {
	Region int
	Task   task.ID
	Took   time.Duration
}

// RestartRegion says the region must be restored from the latest completed
// checkpoint and started again; the actor then reports OnRegionRestarted or
// OnRestoreFailed. Attempt is the n-th consecutive restart whose backoff
// delay has just passed.
type RestartRegion struct {
	Region  int
	Tasks   []task.ID
	Attempt int
	// Checkpoint is the checkpoint to restore from (0: start over).
	Checkpoint uint64
}

// FailJob says the restart intensity was exceeded beyond the job's own limit:
// the job fails, keeping its last checkpoint. Task and Cause are those of the
// original failure (the task failure that stopped the region, not its
// consequences); Reason says which limit was exceeded and by what event.
type FailJob struct {
	Cause  string
	Task   task.ID
	Reason string
}

// Ignored reports an event dropped on purpose, such as a failure report from
// a task of a region already stopped (the stop itself makes its tasks
// report); it is for logs and metrics.
type Ignored struct {
	Reason string
}

func (StopRegion) action()     {}
func (StopLocally) action()    {}
func (RegionReady) action()    {}
func (RecordRecovery) action() {}
func (RestartRegion) action()  {}
func (FailJob) action()        {}
func (Ignored) action()        {}

// String renders the action for logs and scripted tests.
func (a StopRegion) String() string {
	s := fmt.Sprintf("StopRegion(%d, [%s]", a.Region, joinTasks(a.Tasks))
	if len(a.Alive) > 0 {
		s += fmt.Sprintf(", alive [%s]", joinTasks(a.Alive))
	}
	if len(a.Lost) > 0 {
		s += fmt.Sprintf(", lost [%s]", joinTasks(a.Lost))
	}
	return s + ")"
}

// String renders the action for logs and scripted tests.
func (a StopLocally) String() string { return fmt.Sprintf("StopLocally(%v)", a.Task) }

// String renders the action for logs and scripted tests.
func (a RegionReady) String() string {
	return fmt.Sprintf("RegionReady(%d, [%s])", a.Region, joinTasks(a.Tasks))
}

// String renders the action for logs and scripted tests.
func (a RecordRecovery) String() string {
	return fmt.Sprintf("RecordRecovery(%d, %v, %v)", a.Region, a.Task, a.Took)
}

// String renders the action for logs and scripted tests.
func (a RestartRegion) String() string {
	s := fmt.Sprintf("RestartRegion(%d, attempt %d, [%s]", a.Region, a.Attempt, joinTasks(a.Tasks))
	if a.Checkpoint > 0 {
		s += fmt.Sprintf(", from checkpoint %d", a.Checkpoint)
	}
	return s + ")"
}

// String renders the action for logs and scripted tests.
func (a FailJob) String() string {
	return fmt.Sprintf("FailJob(%v, %q, %q)", a.Task, a.Cause, a.Reason)
}

// String renders the action for logs and scripted tests.
func (a Ignored) String() string { return fmt.Sprintf("Ignored(%q)", a.Reason) }

func joinTasks(ts []task.ID) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, " ")
}
