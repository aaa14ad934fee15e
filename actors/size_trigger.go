package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/barriers"
)

// alignBarrierMsg asks a channel to deliver barrier id again, in order after
// its data up to lastSeq: the consumer fell back to alignment on this input
// because the data the barrier overtook exceeded --max-inflight-bytes.
type alignBarrierMsg struct {
	priority
	id      uint64
	lastSeq uint64
}

// blockedQueueMsg tells the consumer how many records a blocked channel
// holds queued behind its barrier.
type blockedQueueMsg struct {
	priority
	input   int
	records int
}

// recordSizes estimates the encoded bytes of a task's input records, per
// input, from one buffer of each encoded once.
type recordSizes struct {
	perRecord []float64 // 0: not measured yet
	// queued is per input the records its blocked channel last reported
	// queued behind the barrier (the report may come before the barrier is
	// handed to the aligner, which then reads it).
	queued []int
}

// learn measures input i's record size from b once.
func (s *recordSizes) learn(t *task, i int, b *Buffer) {
	s.size(len(t.in.chans))
	if s.perRecord[i] > 0 || b == nil || b.Records == nil || b.Records.Len() == 0 {
		return
	}
	codec := t.op.Inputs[t.in.chans[i].edgeIndex].Codec
	data, err := codec.AppendBatch(nil, b.Records)
	if err != nil {
		return // no estimate: the size trigger waits for another buffer
	}
	s.perRecord[i] = float64(len(data)) / float64(b.Records.Len())
}

// size fits the per-input slices to n inputs.
func (s *recordSizes) size(n int) {
	if len(s.perRecord) != n {
		s.perRecord, s.queued = make([]float64, n), make([]int, n)
	}
}

// bytes estimates the encoded size of records of input i (0 if not measured).
func (s *recordSizes) bytes(i, records int) int64 {
	if i >= len(s.perRecord) {
		return 0
	}
	return int64(s.perRecord[i] * float64(records))
}

// sizeLimited says the job set --max-inflight-bytes.
func (t *task) sizeLimited() bool { return t.job.opts.Checkpoint.MaxInflightBytes > 0 }

// overtakenBytes estimates the data an overtaking barrier on input brings
// that the task has not processed.
func (t *task) overtakenBytes(input int, overtaken []*Buffer) int64 {
	done := t.aligner.Processed(input)
	records := 0
	for _, b := range overtaken {
		if b.Seq > done {
			t.sizes.learn(t, input, b)
			records += b.Records.Len()
		}
	}
	return t.sizes.bytes(input, records)
}

// onBlockedQueue feeds the data queued behind a blocked input's barrier to
// the aligner.
func (t *task) onBlockedQueue(ctx actor.Context, m *blockedQueueMsg) {
	if t.aligner == nil || !t.sizeLimited() || m.input >= len(t.in.chans) {
		return
	}
	t.sizes.size(len(t.in.chans))
	t.sizes.queued[m.input] = m.records
	t.feedBlocked(ctx, m.input)
}

// feedBlocked gives the aligner the data last reported queued behind input's
// barrier (ignored there unless the input is blocked).
func (t *task) feedBlocked(ctx actor.Context, input int) {
	if t.aligner == nil || !t.sizeLimited() || input >= len(t.sizes.queued) {
		return
	}
	t.carryOut(ctx, t.aligner.OnBlockedBytes(input, t.sizes.bytes(input, t.sizes.queued[input]), t.now()), nil)
}

// forgetQueued drops the reports of inputs that were unblocked.
func (s *recordSizes) forgetQueued(inputs []int) {
	for _, i := range inputs {
		if i < len(s.queued) {
			s.queued[i] = 0
		}
	}
}

// alignInput sends an overtaking barrier back to its channel for in-order
// delivery.
func (t *task) alignInput(ctx actor.Context, a barriers.AlignInput) {
	t.log.Info().Uint64("checkpoint", a.ID).Int("input", a.Input).Str("reason", a.Reason).
		Msg("falls back to alignment on input")
	ctx.Send(t.in.chans[a.Input].pid, &alignBarrierMsg{id: a.ID, lastSeq: a.LastSeq})
}

// onAlignBarrier queues barrier id again for in-order delivery.
func (c *channel) onAlignBarrier(ctx actor.Context, m *alignBarrierMsg) {
	at := len(c.barriers)
	for i, b := range c.barriers {
		if b.id > m.id {
			at = i
			break
		}
	}
	c.barriers = append(c.barriers, nil)
	copy(c.barriers[at+1:], c.barriers[at:])
	c.barriers[at] = &barrierMsg{id: m.id, lastSeq: m.lastSeq}
	if c.fallback.requeued == nil {
		c.fallback.requeued = map[uint64]bool{}
	}
	c.fallback.requeued[m.id] = true
	c.deliver(ctx)
}

// fallbackBarriers keeps a channel's barriers in id order at its consumer:
// an overtaking barrier waits while the channel is blocked at an older
// in-order barrier (several checkpoints in flight: the consumer aligns the
// older one) and while an older one that fell back to alignment is not
// handled yet (delivered in order and unblocked, or switched to overtaking).
type fallbackBarriers struct {
	requeued  map[uint64]bool // sent back for in-order delivery, not delivered yet
	blockedBy uint64          // such a barrier delivered in order, until unblocked
	deferred  []*barrierMsg   // overtaking barriers waiting behind one, in order
}

// holds says an overtaking barrier id must wait behind an older one.
func (f *fallbackBarriers) holds(c *channel, id uint64) bool {
	return c.waitsWhileBlocked() || len(f.deferred) > 0 || f.older(id)
}

// waitsWhileBlocked says an overtaking barrier waits for the channel to be
// unblocked: with several checkpoints in flight or a size limit, the barrier
// that blocked it may belong to a checkpoint still aligning at the consumer.
// (With one in flight and no limit, a newer barrier means the older one was
// aborted, and it overtakes at once.)
func (c *channel) waitsWhileBlocked() bool {
	return c.blocked && c.ordersBarriers()
}

// ordersBarriers says the consumer must see this channel's barriers in id
// order: with several checkpoints in flight (or a size limit, under which an
// older checkpoint may still be aligning) an overtaking barrier does not
// pass an older one (it overtakes an older held one first, and waits while
// the channel is blocked at one). With one in flight and no limit a newer
// barrier means the older one was aborted, and it passes it.
func (c *channel) ordersBarriers() bool {
	co := c.job.opts.Checkpoint
	return co.MaxConcurrent > 1 || co.MaxInflightBytes > 0
}

// older says a fallen-back barrier older than id is not handled yet.
func (f *fallbackBarriers) older(id uint64) bool {
	if f.blockedBy != 0 && f.blockedBy < id {
		return true
	}
	for r := range f.requeued {
		if r < id {
			return true
		}
	}
	return false
}

// delivered notes barrier id delivered in order.
func (f *fallbackBarriers) delivered(id uint64) {
	if f.requeued[id] {
		delete(f.requeued, id)
		f.blockedBy = id
	}
}

// overtaken notes barrier id delivered overtaking (switched).
func (f *fallbackBarriers) overtaken(id uint64) { delete(f.requeued, id) }

// passes says buffer seq may be delivered: no deferred overtaking barrier
// comes before it, once those that can go are released.
func (f *fallbackBarriers) passes(ctx actor.Context, c *channel, seq uint64) bool {
	if len(f.deferred) == 0 || seq <= f.deferred[0].lastSeq {
		return true
	}
	f.release(ctx, c)
	return len(f.deferred) == 0 || seq <= f.deferred[0].lastSeq
}

// release delivers the deferred overtaking barriers no older fallen-back one
// holds any more.
func (f *fallbackBarriers) release(ctx actor.Context, c *channel) {
	for len(f.deferred) > 0 && !c.waitsWhileBlocked() && !f.older(f.deferred[0].id) {
		m := f.deferred[0]
		f.deferred = f.deferred[1:]
		c.overtake(ctx, m)
	}
}

// reportBlocked tells the consumer how many records wait behind the barrier
// of a blocked channel, when the job limits in-flight bytes.
func (c *channel) reportBlocked(ctx actor.Context) {
	if !c.blocked || c.job.opts.Checkpoint.MaxInflightBytes <= 0 {
		return
	}
	records := 0
	for _, b := range c.queue {
		records += b.Records.Len()
	}
	ctx.Send(c.consumer, &blockedQueueMsg{input: c.input, records: records})
}

// heldBack says input i must keep buffer seq for now: the input is blocked
// at an aligned barrier, or a barrier that fell back to alignment there has
// not come again and seq is after it (the aligner owns the hold; see
// barriers.Aligner.Holds).
func (t *task) heldBack(i int, seq uint64) bool {
	return t.aligner != nil && t.aligner.Holds(i, seq)
}
