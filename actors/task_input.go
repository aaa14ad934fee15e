package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// inChannel is a consumer's end of one channel.
type inChannel struct {
	pid       *actor.PID
	edgeIndex int       // index of this input's edge in the operator's Inputs
	replay    []*Buffer // restored channel state, processed before any new input, round by round
	pending   []*Buffer // delivered, not yet processed
	last      uint64    // seq of the last processed buffer
	// cur is the buffer being processed, possibly in parts: curDone of its
	// records are processed, and the rest comes before anything else on this
	// input. curReplay says it came from replay.
	cur       *Buffer
	curDone   int
	curReplay bool
	eos       bool // the channel has ended (after pending)
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
		if !c.eos || c.cur != nil || len(c.pending) > 0 || len(c.replay) > 0 {
			return false
		}
	}
	return true
}

// processNext processes one buffer, round robin over the inputs, or goes on
// with the one an input has in progress. progress is false when no input has
// a buffer waiting; yielded is true when a priority or system message
// interrupted the buffer between two parts (its remainder goes on next).
func (in *inputs) processNext(ctx actor.Context, t *task) (progress, yielded bool) {
	n := len(in.chans)
	round := in.replayRound()
	for k := 0; k < n; k++ {
		i := (in.next + k) % n
		c := in.chans[i]
		if c.cur == nil && !in.take(t, i, round) {
			continue
		}
		if !t.processParts(ctx, c) {
			in.next = i
			return true, true
		}
		in.next = (i + 1) % n
		in.finishBuffer(ctx, t, i)
		return true, false
	}
	return false, false
}

// take makes the next buffer of input i current: restored channel state
// first, of the oldest replay round any input still has (round), then
// delivered buffers, which wait while any input still replays (round > 0).
// It returns false when there is none.
func (in *inputs) take(t *task, i int, round uint64) bool {
	c := in.chans[i]
	switch {
	case len(c.replay) > 0:
		if c.replay[0].round != round {
			return false
		}
		c.cur, c.curReplay = c.replay[0], true
		c.replay[0] = nil
		c.replay = c.replay[1:]
	case len(c.pending) > 0 && round == 0 && !t.rescalePaused(i) && !t.heldBack(i, c.pending[0].Seq):
		c.cur, c.curReplay = c.pending[0], false
		c.pending[0] = nil
		c.pending = c.pending[1:]
		t.captureIfNeeded(i, c.cur)
		t.rescaleFilter(i, c)
	default:
		return false
	}
	c.curDone = 0
	return true
}

// finishBuffer ends input i's current buffer, processed to its last record:
// a delivered one is acknowledged to its channel, and an aligned barrier
// waiting behind it (and behind restored channel state) may now be handled.
func (in *inputs) finishBuffer(ctx actor.Context, t *task, i int) {
	c := in.chans[i]
	b, replayed := c.cur, c.curReplay
	c.cur, c.curDone, c.curReplay = nil, 0, false
	if !replayed {
		c.last = b.Seq
		ctx.Send(c.pid, &ackMsg{seq: b.Seq})
	}
	t.afterBuffer(ctx, i, b)
	t.rescaleAfterBuffer(ctx)
	if c.barrier != nil {
		t.handleInOrderBarrier(ctx, i)
	}
}

// remainder is the unprocessed rest of input c's current buffer, nil if it
// has none: the same seq, the records from curDone on, sharing the storage.
func (c *inChannel) remainder() *Buffer {
	if c.cur == nil {
		return nil
	}
	recs := c.cur.Records
	if c.curDone > 0 {
		recs = recs.Slice(c.curDone, recs.Len())
	}
	return &Buffer{Seq: c.cur.Seq, Records: recs, round: c.cur.round, Mark: c.cur.Mark}
}

// processParts hands input c's current buffer to the operator from record
// curDone on, in parts the task's partSizer sizes, and recycles the batch
// after its last part unless a checkpoint captured it. It returns false when
// a priority or system message is waiting after a part: the remainder stays
// current, before anything else on that input, and the task answers the
// message first. A fast operator gets a whole buffer in one call.
func (t *task) processParts(ctx actor.Context, c *inChannel) bool {
	t.out.ctx = ctx
	t.noteResumed(ctx)
	b := c.cur
	n := b.Records.Len()
	if n == 0 {
		t.callOperator(c.edgeIndex, b.Records)
	}
	for c.curDone < n {
		take := t.parts.size(n - c.curDone)
		recs := b.Records
		if take < n {
			recs = recs.Slice(c.curDone, c.curDone+take)
		}
		began := time.Now()
		t.ctr.recordsIn.Add(int64(take))
		t.flowProcessed(began, b, recs, c.edgeIndex)
		t.out.beginOrigin(b.origin)
		t.callOperator(c.edgeIndex, recs)
		t.out.endOrigin()
		took := time.Since(began)
		t.parts.observe(take, took)
		t.ctr.busy(took)
		c.curDone += take
		if c.curDone < n && t.probe.Waiting() {
			return false
		}
	}
	// The operator is done with the batch; unless a checkpoint still has to
	// encode it, its producer may fill it again.
	if !b.captured {
		if recycle := t.op.Inputs[c.edgeIndex].Recycle; recycle != nil {
			recycle(b.Records)
		}
	}
	return true
}

// callOperator hands records of input edge edgeIndex to the operator.
func (t *task) callOperator(edgeIndex int, recs plan.Batch) {
	switch {
	case t.tr != nil:
		if err := t.tr.Process(edgeIndex, recs, &t.out); err != nil {
			t.fail(fmt.Errorf("process: %w", err))
		}
	case t.sink != nil:
		t.checkLease()
		if err := t.sink.Write(recs); err != nil {
			t.fail(fmt.Errorf("write: %w", err))
		}
		t.job.Metrics.RecordsOut.Add(int64(recs.Len()))
		t.ctr.recordsOut.Add(int64(recs.Len()))
	}
}

// handleInOrderBarrier hands an aligned barrier to the aligner once every
// buffer before it on its input has been processed.
func (t *task) handleInOrderBarrier(ctx actor.Context, input int) {
	c := t.in.chans[input]
	if c.barrier == nil || c.cur != nil || (len(c.pending) > 0 && c.pending[0].Seq <= c.barrier.lastSeq) || len(c.replay) > 0 {
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
