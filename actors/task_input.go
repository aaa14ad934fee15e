package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// inChannel is a consumer's end of one channel.
type inChannel struct {
	pid       *actor.PID
	edgeIndex int       // index of this input's edge in the operator's Inputs
	replay    []*Buffer // restored channel state, processed before any new input
	pending   []*Buffer // delivered, not yet processed
	last      uint64    // seq of the last processed buffer
	eos       bool      // the channel has ended (after pending)
	// barrier is an aligned barrier delivered behind pending; it is handled
	// once pending is processed.
	barrier *barrierInOrderMsg
}

// inputs is a task's input side.
type inputs struct {
	chans []*inChannel
	next  int // round-robin position
	ended int
}

func (in *inputs) add(pid *actor.PID, edgeIndex int) {
	in.chans = append(in.chans, &inChannel{pid: pid, edgeIndex: edgeIndex})
}

// deliver queues a buffer handed over by a channel.
func (in *inputs) deliver(t *task, input int, b *Buffer) {
	c := in.chans[input]
	c.pending = append(c.pending, b)
	raise(&t.job.Metrics.MaxPendingInput, int64(len(c.pending)))
}

// end marks an input as ended once its pending buffers are processed.
func (in *inputs) end(input int) {
	in.chans[input].eos = true
}

// allEnded reports whether every input has ended and been drained.
func (in *inputs) allEnded() bool {
	for _, c := range in.chans {
		if !c.eos || len(c.pending) > 0 || len(c.replay) > 0 {
			return false
		}
	}
	return true
}

// processNext processes one pending buffer, round robin over the inputs. It
// returns false when no input has a buffer waiting.
func (in *inputs) processNext(ctx actor.Context, t *task) bool {
	n := len(in.chans)
	replaying := in.replaying()
	for k := 0; k < n; k++ {
		i := (in.next + k) % n
		c := in.chans[i]
		if len(c.replay) > 0 {
			in.next = (i + 1) % n
			b := c.replay[0]
			c.replay[0] = nil
			c.replay = c.replay[1:]
			t.process(ctx, c, b)
			// An in-order barrier with no new data before it can arrive
			// while the replay runs: hand it over when the replay ends.
			t.handleInOrderBarrier(ctx, i)
			return true
		}
		if len(c.pending) == 0 || replaying {
			continue
		}
		in.next = (i + 1) % n
		b := c.pending[0]
		c.pending[0] = nil
		c.pending = c.pending[1:]
		t.captureIfNeeded(i, b)
		t.process(ctx, c, b)
		c.last = b.Seq
		ctx.Send(c.pid, &ackMsg{seq: b.Seq})
		if len(c.pending) == 0 && c.barrier != nil {
			t.handleInOrderBarrier(ctx, i)
		}
		return true
	}
	return false
}

// process hands one buffer to the operator.
func (t *task) process(ctx actor.Context, c *inChannel, b *Buffer) {
	t.out.ctx = ctx
	t.noteResumed(ctx)
	switch {
	case t.tr != nil:
		if err := t.tr.Process(c.edgeIndex, b.Records, &t.out); err != nil {
			t.fail(fmt.Errorf("process: %w", err))
		}
	case t.sink != nil:
		if err := t.sink.Write(b.Records); err != nil {
			t.fail(fmt.Errorf("write: %w", err))
		}
		t.job.Metrics.RecordsOut.Add(int64(b.Records.Len()))
	}
	// The operator is done with the batch; unless a checkpoint still has to
	// encode it, its producer may fill it again.
	if !b.captured {
		if recycle := t.op.Inputs[c.edgeIndex].Recycle; recycle != nil {
			recycle(b.Records)
		}
	}
}

// handleInOrderBarrier hands an aligned barrier to the aligner once every
// buffer before it on its input has been processed.
func (t *task) handleInOrderBarrier(ctx actor.Context, input int) {
	c := t.in.chans[input]
	if c.barrier == nil || len(c.pending) > 0 || len(c.replay) > 0 {
		return
	}
	m := c.barrier
	c.barrier = nil
	if m.final {
		t.onFinalBarrier(ctx, input, m.id, m.lastSeq)
		return
	}
	t.onBarrier(ctx, input, m.id, m.lastSeq, false, nil)
}
