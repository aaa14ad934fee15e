package rescale

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/rescale/flow"
)

// Action is one thing the job's shell must do for a rescale, in the order
// returned. The set is sealed: WaitCheckpoint, Spawn, InjectBarrier, Fence,
// Commit, Finished, Abort, Recover and Refused.
type Action interface {
	action()
	String() string
}

// WaitCheckpoint says the rescale waits for checkpoint ID to finish before it
// starts: a rescale never runs concurrently with a checkpoint.
type WaitCheckpoint struct{ ID uint64 }

// Spawn tells the shell to start instance Instance of Operator on Node ("" in
// one process) and wire its channels: from every producer instance of its
// inputs, to every consumer instance of its outputs, as the plan's new
// partitioners need them. The shell answers with Prepared.
type Spawn struct {
	Operator string
	Instance int
	Node     string
}

// InjectBarrier tells the shell to hand the rescale barrier to every source
// task, and each running task its TaskConfig.
type InjectBarrier struct{ Rescale uint64 }

// Fence tells every instance of Operator (Task.Fence) that each consumer has
// processed all that instance From sent before its switch.
type Fence struct {
	Operator string
	From     int
}

// Commit tells the shell that the plan's tables and parallelisms are the
// job's from now on (Plan.Apply): the next checkpoint's manifest has them,
// and a recovery restores at the new parallelisms. Checkpoints may run again.
type Commit struct{ Rescale uint64 }

// Finished reports the rescale's result.
type Finished struct{ Result Result }

// Abort says the rescale failed; Recover follows.
type Abort struct {
	Rescale uint64
	Reason  string
}

// Recover tells the shell to restart the whole job from its latest completed
// checkpoint. Committed says with which tables: false, the old ones (the
// rescale did not commit: every new instance is dropped, every removed one
// runs again); true, the plan's (the checkpoint, taken before the rescale,
// is restored at the new parallelisms).
type Recover struct {
	Rescale   uint64
	Committed bool
}

// Result is what a rescale measured.
type Result struct {
	Rescale uint64
	// Changes is the plan's Summary.
	Changes string
	// Took is from Start to Commit, Waited the part spent waiting for a
	// checkpoint to finish.
	Took, Waited time.Duration
	// Moved key groups against the fewest a balanced plan could move.
	Moved, Minimum int
	// Bytes of state handed off: key groups' state and removed sink
	// instances' staged output.
	Bytes int64
	// LongestPause is the longest any moved group waited for its state.
	LongestPause time.Duration
	// Flow is the rescaled operators' throughput and waits around the
	// rescale, which the shell adds from its tasks' flows (nil:
	// not measured).
	Flow *flow.Flow
}

func (WaitCheckpoint) action() {}
func (Spawn) action()          {}
func (InjectBarrier) action()  {}
func (Fence) action()          {}
func (Commit) action()         {}
func (Finished) action()       {}
func (Abort) action()          {}
func (Recover) action()        {}

func (a WaitCheckpoint) String() string { return fmt.Sprintf("wait-checkpoint id=%d", a.ID) }
func (a Spawn) String() string {
	return fmt.Sprintf("spawn task=%s[%d] node=%q", a.Operator, a.Instance, a.Node)
}
func (a InjectBarrier) String() string { return fmt.Sprintf("inject-barrier rescale=%d", a.Rescale) }
func (a Fence) String() string         { return fmt.Sprintf("fence %s[%d]", a.Operator, a.From) }
func (a Commit) String() string        { return fmt.Sprintf("commit rescale=%d", a.Rescale) }
func (a Finished) String() string {
	r := a.Result
	return fmt.Sprintf("finished rescale=%d took=%s waited=%s moved=%d min=%d bytes=%d longest-pause=%s",
		r.Rescale, r.Took, r.Waited, r.Moved, r.Minimum, r.Bytes, r.LongestPause)
}
func (a Abort) String() string { return fmt.Sprintf("abort rescale=%d reason=%q", a.Rescale, a.Reason) }
func (a Recover) String() string {
	tables := "old"
	if a.Committed {
		tables = "new"
	}
	return fmt.Sprintf("recover rescale=%d tables=%s", a.Rescale, tables)
}
