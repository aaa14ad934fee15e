package supervision

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/internal/task"
)

// Action is one thing the job's supervising actor must do, in the order
// returned. The set is sealed: StopRegion, RestartRegion, FailJob and Ignored.
type Action interface {
	action()
	String() string
}

// StopRegion says the region's tasks and channels must stop now (a failure
// was detected in it, or the whole job restarts).
type StopRegion struct {
	Region int
	Tasks  []task.ID
}

// RestartRegion says the region must be restored from the latest completed
// checkpoint and started again; the actor then reports OnRegionRestarted or
// OnRestoreFailed. Attempt is the n-th consecutive restart whose backoff
// delay has just passed.
type RestartRegion struct {
	Region  int
	Tasks   []task.ID
	Attempt int
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

func (StopRegion) action()    {}
func (RestartRegion) action() {}
func (FailJob) action()       {}
func (Ignored) action()       {}

// String renders the action for logs and scripted tests.
func (a StopRegion) String() string {
	return fmt.Sprintf("StopRegion(%d, [%s])", a.Region, joinTasks(a.Tasks))
}

// String renders the action for logs and scripted tests.
func (a RestartRegion) String() string {
	return fmt.Sprintf("RestartRegion(%d, attempt %d, [%s])", a.Region, a.Attempt, joinTasks(a.Tasks))
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
