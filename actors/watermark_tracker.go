package actors

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// MarkKind says what a buffer's Mark carries.
type MarkKind uint8

const (
	// NoMark: the buffer carries no watermark.
	NoMark MarkKind = iota
	// WatermarkMark: the producer's watermark advanced to Mark.At.
	WatermarkMark
	// IdleMark: the producer is idle; leave it out of the minimum until it
	// sends a watermark again.
	IdleMark
)

// Mark is a watermark or an idleness notice travelling on a channel, after
// the records of the buffer that carries it.
type Mark struct {
	Kind MarkKind
	At   int64 // the watermark (WatermarkMark), Unix nanoseconds
}

// watermarkTracker combines the watermarks of a task's input channels: the
// task's input watermark is the minimum over its active inputs, reported
// only when it advances. A pure state machine: no clocks, no goroutines.
type watermarkTracker struct {
	inputs []inputWatermark
	// combined is the last input watermark reported (never goes back).
	combined int64
	// idle is true while every input is idle (the task is idle too).
	idle bool
}

// inputWatermark is one input channel's watermark and status.
type inputWatermark struct {
	at   int64
	idle bool
}

// newWatermarkTracker tracks n inputs, none of which has a watermark yet.
func newWatermarkTracker(n int) watermarkTracker {
	w := watermarkTracker{inputs: make([]inputWatermark, n), combined: plan.MinWatermark}
	for i := range w.inputs {
		w.inputs[i].at = plan.MinWatermark
	}
	return w
}

// trackerResult is what one mark changed: the input watermark advanced to
// At, or the task as a whole became idle or active again.
type trackerResult struct {
	Advanced bool
	At       int64
	// BecameIdle / BecameActive report a change of the task's own status.
	BecameIdle, BecameActive bool
}

// OnMark takes the mark input i delivered.
func (w *watermarkTracker) OnMark(i int, m Mark) trackerResult {
	in := &w.inputs[i]
	switch m.Kind {
	case WatermarkMark:
		in.idle = false
		if m.At > in.at {
			in.at = m.At
		}
	case IdleMark:
		in.idle = true
	default:
		return trackerResult{}
	}
	return w.recompute()
}

// recompute derives the combined watermark and status from the inputs.
func (w *watermarkTracker) recompute() trackerResult {
	var r trackerResult
	lowest, active := plan.MaxWatermark, false
	for _, in := range w.inputs {
		if in.idle {
			continue
		}
		active = true
		lowest = min(lowest, in.at)
	}
	if !active {
		if !w.idle {
			w.idle = true
			r.BecameIdle = true
		}
		return r
	}
	if w.idle {
		w.idle = false
		r.BecameActive = true
	}
	if lowest > w.combined {
		w.combined = lowest
		r.Advanced, r.At = true, lowest
	}
	return r
}

// Combined is the input watermark reported last.
func (w *watermarkTracker) Combined() int64 { return w.combined }

// wireMark is the Mark a received message names; an unknown kind is an error.
func wireMark(kind uint8, at int64) (Mark, error) {
	if MarkKind(kind) > IdleMark {
		return Mark{}, fmt.Errorf("unknown watermark mark kind %d", kind)
	}
	return Mark{Kind: MarkKind(kind), At: at}, nil
}
