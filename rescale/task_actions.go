package rescale

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/rescale/flow"
)

// TaskAction is one thing a task's shell must do for a rescale, in the order
// returned. The set is sealed: Switch, SetAside, Handoff, Restore, Release,
// PauseInput, ResumeInput, InputDrained, HandStaged, TakeStaged, TaskDone
// and Stop.
type TaskAction interface {
	taskAction()
	String() string
}

// Switch tells the task to send the rescale barrier on every output channel
// it had before the rescale and, at that same point in its output, to route
// every later record by the plan's new tables and partitioners (to the new
// instances' channels, no longer to removed ones).
type Switch struct{ Rescale uint64 }

// SetAside tells the task to take, from the overtaken buffer copies that came
// with Input's barrier, those with seq in (AfterSeq, LastSeq], the records of
// Groups, and keep them, per input in seq order, for the handoff of those
// groups. The originals still arrive; Buffer then says to drop those records.
type SetAside struct {
	Input             int
	AfterSeq, LastSeq uint64
	Groups            []int
}

// Handoff tells an old owner to send To the state of Groups (it has seen
// every record of them it will ever get) together with the records of Groups
// it set aside, and then to drop that state.
type Handoff struct {
	To     int
	Groups []int
}

// Restore tells a new owner to install the state of Groups that instance From
// handed off, and to keep the records that came with it for Release.
type Restore struct {
	From   int
	Groups []int
}

// Release tells a new owner to process the records of Group that came with
// its handoff, in their order, then those it held, in arrival order, and
// every later one as it comes. Waited is how long the group was paused: from
// its first held record to now (0 if none was held).
type Release struct {
	Group  int
	Waited time.Duration
}

// PauseInput tells the task to take no more buffers from Input: the
// records it holds for paused groups, HeldBytes in all, have reached the
// budget (TaskConfig.HoldBytes). Its channel then fills, and its producer
// waits for credit.
type PauseInput struct {
	Input     int
	HeldBytes int64
}

// ResumeInput lets the task take buffers from Input again.
type ResumeInput struct{ Input int }

// InputDrained says the task has processed every buffer that Input's
// producer sent before its rescale barrier. The shell reports it to the
// Coordinator (Coordinator.InputDrained), which fences moved groups on it.
type InputDrained struct{ Input int }

// TaskDone says the task has finished its part: switched, handed off, every
// moving-in group released and every input drained up to its barrier.
type TaskDone struct {
	Rescale uint64
	Result  TaskResult
}

// TaskResult is what one task measured in a rescale.
type TaskResult struct {
	// Received counts the key groups restored here; Bytes is their size
	// and that of the staged output taken over here (Staged).
	Received int
	Bytes    int64
	// LongestPause is the longest a moved group waited here.
	LongestPause time.Duration
	// Flow is what the task measured of its records (nil: not measured).
	Flow *flow.Task
}

// Stop tells a removed instance to flush its outputs and stop.
type Stop struct{}

// HandStaged tells a removed instance of a sink that stages its output to
// send To everything it staged and has not committed (sealed for
// checkpoints not yet committed, and written since the last one), and to
// keep none of it: it has written its last record.
type HandStaged struct{ To int }

// TakeStaged tells an instance to take over the staged output that removed
// instance From handed it: to commit it as its own.
type TakeStaged struct{ From int }

func (Switch) taskAction()       {}
func (SetAside) taskAction()     {}
func (Handoff) taskAction()      {}
func (Restore) taskAction()      {}
func (Release) taskAction()      {}
func (PauseInput) taskAction()   {}
func (ResumeInput) taskAction()  {}
func (InputDrained) taskAction() {}
func (TaskDone) taskAction()     {}
func (Stop) taskAction()         {}
func (HandStaged) taskAction()   {}
func (TakeStaged) taskAction()   {}

func (a Switch) String() string { return fmt.Sprintf("switch rescale=%d", a.Rescale) }
func (a SetAside) String() string {
	return fmt.Sprintf("set-aside in=%d seqs=%d..%d groups=%s", a.Input, a.AfterSeq+1, a.LastSeq, ints(a.Groups))
}
func (a Handoff) String() string { return fmt.Sprintf("handoff to=%d groups=%s", a.To, ints(a.Groups)) }
func (a Restore) String() string {
	return fmt.Sprintf("restore from=%d groups=%s", a.From, ints(a.Groups))
}
func (a Release) String() string { return fmt.Sprintf("release group=%d waited=%s", a.Group, a.Waited) }
func (a PauseInput) String() string {
	return fmt.Sprintf("pause in=%d held-bytes=%d", a.Input, a.HeldBytes)
}
func (a ResumeInput) String() string  { return fmt.Sprintf("resume in=%d", a.Input) }
func (a InputDrained) String() string { return fmt.Sprintf("input-drained in=%d", a.Input) }
func (a TaskDone) String() string {
	return fmt.Sprintf("done rescale=%d received=%d bytes=%d longest-pause=%s", a.Rescale, a.Result.Received, a.Result.Bytes, a.Result.LongestPause)
}
func (Stop) String() string         { return "stop" }
func (a HandStaged) String() string { return fmt.Sprintf("hand-staged to=%d", a.To) }
func (a TakeStaged) String() string { return fmt.Sprintf("take-staged from=%d", a.From) }

// ints renders a list as 1,2,3 (or - when empty).
func ints(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s
}
