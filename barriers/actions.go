package barriers

import (
	"fmt"
	"time"
)

// Action is one thing the task actor must do, in the order returned. The set
// of actions is sealed: Snapshot, ForwardBarrier, CaptureOvertaken, Unblock,
// SwitchToUnaligned, AlignInput, StartTimer, Complete, Aborted and Ignored.
type Action interface {
	action()
	String() string
}

// Snapshot tells the task to take the operator snapshot for checkpoint ID now,
// before it processes anything else.
type Snapshot struct{ ID uint64 }

// ForwardBarrier tells the task to send barrier ID to every output; Unaligned
// means at the head of each output queue, overtaking queued data. Final marks
// the barrier of the final checkpoint, which downstream tasks align too.
type ForwardBarrier struct {
	ID        uint64
	Unaligned bool
	Final     bool
}

// CaptureOvertaken tells the task to keep, as channel state of checkpoint ID,
// the overtaken buffer copies that came with Input's barrier whose seq is
// greater than AfterSeq (the others were processed already).
type CaptureOvertaken struct {
	ID       uint64
	Input    int
	AfterSeq uint64
}

// Unblock tells the task to let these inputs' channels resume delivery.
type Unblock struct {
	ID     uint64
	Inputs []int
}

// SwitchToUnaligned asks these inputs' channels to deliver barrier ID now,
// overtaking their queued data. Reason says why a size limit switched it
// (empty for the alignment timeout or an upstream switch).
type SwitchToUnaligned struct {
	ID     uint64
	Inputs []int
	Reason string
}

// AlignInput says barrier ID overtook data on Input but the checkpoint falls
// back to alignment there (Reason says why): drop its overtaken copies and
// have the channel deliver it again in order, after its data up to LastSeq.
type AlignInput struct {
	ID      uint64
	Input   int
	LastSeq uint64
	Reason  string
}

// StartTimer asks the task to call OnTimeout(ID, ...) at logical time At.
type StartTimer struct {
	ID uint64
	At time.Duration
}

// Complete says every input's barrier of checkpoint ID is in and its channel
// state is complete: the task persists its snapshot and channel state and
// acknowledges to the coordinator. AlignmentDuration is the time from the
// first to the last barrier; Unaligned says if the snapshot was taken before
// alignment (channel state may be non-empty).
type Complete struct {
	ID                uint64
	AlignmentDuration time.Duration
	Unaligned         bool
}

// Aborted tells the task to drop the snapshot and channel state captured for
// checkpoint ID.
type Aborted struct{ ID uint64 }

// Ignored reports a barrier of an already completed, aborted or superseded
// checkpoint that arrived on Input; there is nothing to do but count it.
type Ignored struct {
	ID    uint64
	Input int
}

func (Snapshot) action()          {}
func (ForwardBarrier) action()    {}
func (CaptureOvertaken) action()  {}
func (Unblock) action()           {}
func (SwitchToUnaligned) action() {}
func (AlignInput) action()        {}
func (StartTimer) action()        {}
func (Complete) action()          {}
func (Aborted) action()           {}
func (Ignored) action()           {}

// String renders the action for logs and scripted tests.
func (a Snapshot) String() string { return fmt.Sprintf("Snapshot(%d)", a.ID) }

// String renders the action for logs and scripted tests.
func (a ForwardBarrier) String() string {
	switch {
	case a.Unaligned:
		return fmt.Sprintf("ForwardBarrier(%d, unaligned)", a.ID)
	case a.Final:
		return fmt.Sprintf("ForwardBarrier(%d, aligned, final)", a.ID)
	}
	return fmt.Sprintf("ForwardBarrier(%d, aligned)", a.ID)
}

// String renders the action for logs and scripted tests.
func (a CaptureOvertaken) String() string {
	return fmt.Sprintf("CaptureOvertaken(%d, in=%d, after=%d)", a.ID, a.Input, a.AfterSeq)
}

// String renders the action for logs and scripted tests.
func (a Unblock) String() string { return fmt.Sprintf("Unblock(%d, %v)", a.ID, a.Inputs) }

// String renders the action for logs and scripted tests.
func (a SwitchToUnaligned) String() string {
	if a.Reason != "" {
		return fmt.Sprintf("SwitchToUnaligned(%d, %v, %q)", a.ID, a.Inputs, a.Reason)
	}
	return fmt.Sprintf("SwitchToUnaligned(%d, %v)", a.ID, a.Inputs)
}

// String renders the action for logs and scripted tests.
func (a AlignInput) String() string {
	return fmt.Sprintf("AlignInput(%d, in=%d, last=%d, %q)", a.ID, a.Input, a.LastSeq, a.Reason)
}

// String renders the action for logs and scripted tests.
func (a StartTimer) String() string { return fmt.Sprintf("StartTimer(%d, at=%v)", a.ID, a.At) }

// String renders the action for logs and scripted tests.
func (a Complete) String() string {
	kind := "aligned"
	if a.Unaligned {
		kind = "unaligned"
	}
	return fmt.Sprintf("Complete(%d, alignment=%v, %s)", a.ID, a.AlignmentDuration, kind)
}

// String renders the action for logs and scripted tests.
func (a Aborted) String() string { return fmt.Sprintf("Aborted(%d)", a.ID) }

// String renders the action for logs and scripted tests.
func (a Ignored) String() string { return fmt.Sprintf("Ignored(%d, in=%d)", a.ID, a.Input) }
