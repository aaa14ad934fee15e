package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// taskWatermarks is a task's event-time side: the tracker over its input
// channels and what it last sent downstream.
type taskWatermarks struct {
	ready   bool
	tracker watermarkTracker
	out     int64 // the last watermark sent downstream
	outIdle bool  // the last mark sent downstream was idle
	gen     plan.WatermarkGenerator
	et      plan.EventTimeOperator
	pt      plan.ProcessingTimeOperator
}

// watermarks returns the task's event-time side, set up on first use (the
// inputs and the operator instance exist by then).
func (t *task) watermarks() *taskWatermarks {
	w := &t.wm
	if !w.ready {
		w.ready = true
		w.tracker = newWatermarkTracker(len(t.in.chans))
		w.out = plan.MinWatermark
		w.gen, _ = t.inst.(plan.WatermarkGenerator)
		w.et, _ = t.inst.(plan.EventTimeOperator)
		w.pt, _ = t.inst.(plan.ProcessingTimeOperator)
	}
	return w
}

// afterBuffer takes the mark that followed input i's buffer b, then lets a
// generating operator publish its watermark.
func (t *task) afterBuffer(ctx actor.Context, i int, b *Buffer) {
	if len(t.op.Outputs) == 0 {
		return // a sink: nothing downstream to tell
	}
	w := t.watermarks()
	if b.Mark.Kind != NoMark {
		t.onInputMark(ctx, w, i, b.Mark)
	}
	if w.gen != nil {
		t.publishGenerated(ctx, w, time.Now())
	}
}

// onInputMark updates the input watermark and acts on what changed.
func (t *task) onInputMark(ctx actor.Context, w *taskWatermarks, i int, m Mark) {
	r := w.tracker.OnMark(i, m)
	if w.gen != nil {
		// A generator makes its own watermarks; only the end of its input
		// passes through.
		if r.Advanced && r.At == plan.MaxWatermark {
			t.advanceOutput(ctx, w, plan.MaxWatermark)
		}
		return
	}
	if r.BecameIdle {
		t.sendIdle(ctx, w)
	}
	if r.Advanced {
		at := r.At
		if w.et != nil {
			t.out.ctx = ctx
			var err error
			if at, err = w.et.OnWatermark(r.At, &t.out); err != nil {
				t.fail(fmt.Errorf("watermark %d: %w", r.At, err))
			}
		}
		t.advanceOutput(ctx, w, at)
	}
	if r.BecameActive && w.outIdle {
		t.sendMark(ctx, w, Mark{Kind: WatermarkMark, At: w.out})
	}
}

// publishGenerated sends a generating instance's watermark or idleness when
// it changed.
func (t *task) publishGenerated(ctx actor.Context, w *taskWatermarks, now time.Time) {
	at, idle := w.gen.Watermark(now)
	if idle {
		t.sendIdle(ctx, w)
		return
	}
	t.advanceOutput(ctx, w, at)
}

// advanceOutput sends watermark at downstream if it is ahead of the last one
// sent, or if the output was idle (at then reactivates it).
func (t *task) advanceOutput(ctx actor.Context, w *taskWatermarks, at int64) {
	if at > w.out {
		w.out = at
	} else if !w.outIdle {
		return
	}
	t.sendMark(ctx, w, Mark{Kind: WatermarkMark, At: w.out})
}

// sendIdle tells every consumer that this task is idle, once.
func (t *task) sendIdle(ctx actor.Context, w *taskWatermarks) {
	if !w.outIdle {
		t.sendMark(ctx, w, Mark{Kind: IdleMark})
	}
}

// sendMark seals every output channel's partial batch (or an empty one)
// with mark m after its records, so the mark keeps its place in the stream.
func (t *task) sendMark(ctx actor.Context, w *taskWatermarks, m Mark) {
	w.outIdle = m.Kind == IdleMark
	o := &t.out
	o.ctx = ctx
	for _, oe := range o.edges {
		for c, ch := range oe.channels {
			if ch.eos || retiredChannel(oe, c) {
				continue // ended, or a removed consumer's: nothing follows
			}
			recs := oe.writer.Take(c)
			if recs == nil {
				e, ok := oe.writer.(interface{ EmptyBatch() plan.Batch })
				if !ok {
					t.fail(fmt.Errorf("output %s→%s: its writer %T cannot carry a watermark", oe.edge.From.Name, oe.edge.To.Name, oe.writer))
				}
				recs = e.EmptyBatch()
			}
			o.sealBuffer(ch, &Buffer{Records: recs, Mark: m, origin: ch.open.Sealed()})
		}
	}
}

// afterSourceRead publishes a generating source's watermark after a read.
func (t *task) afterSourceRead(ctx actor.Context) {
	if w := t.watermarks(); w.gen != nil {
		t.publishGenerated(ctx, w, time.Now())
	}
}

// endOfInputWatermark sends the final watermark when a source's input ends:
// every event-time timer downstream fires before the end of the stream (and
// before the final checkpoint).
func (t *task) endOfInputWatermark(ctx actor.Context) {
	t.advanceOutput(ctx, t.watermarks(), plan.MaxWatermark)
}

// onWatermarkTick fires processing-time timers and lets a generator report
// idleness, on each flush tick.
func (t *task) onWatermarkTick(ctx actor.Context) {
	if !t.phase.running() || t.inst == nil {
		return
	}
	w := t.watermarks()
	if w.pt != nil {
		t.out.ctx = ctx
		if err := w.pt.OnProcessingTime(time.Now(), &t.out); err != nil {
			t.fail(fmt.Errorf("processing-time timers: %w", err))
		}
	}
	if w.gen != nil && len(t.op.Outputs) > 0 {
		t.publishGenerated(ctx, w, time.Now())
	}
}

// endOfInputAtFinalBarrier takes the end watermark on every input once the
// final checkpoint's barriers have all arrived (nothing but the end of
// stream follows them): every event-time timer fires, and the end
// watermark goes downstream, before the final snapshot and barrier, even if
// an end watermark was lost on the way (a mark inside restored channel
// state is not kept).
func (t *task) endOfInputAtFinalBarrier(ctx actor.Context) {
	if len(t.op.Outputs) == 0 {
		return
	}
	w := t.watermarks()
	if w.tracker.Combined() == plan.MaxWatermark {
		return
	}
	for i := range t.in.chans {
		t.onInputMark(ctx, w, i, Mark{Kind: WatermarkMark, At: plan.MaxWatermark})
	}
}
