package actors

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// taskCheckpoint is a task's part of the checkpoint in progress.
type taskCheckpoint struct {
	id       uint64
	snap     plan.Snapshot
	pending  plan.PendingSnapshot // the view of the state an asynchronous snapshot encodes later
	laid     []byte               // the buffer pending appended snap's key groups to (snap.Sections), if it did
	streamed int64                // the bytes of key groups pending wrote to the store instead (snap.Sections), if it did
	offset   int64
	splits   []store.SourceSplit // a split source's splits
	captured [][]*Buffer         // per input: channel state, in order
	chain    chainView           // the key-group chains its deltas build on (task_chains.go)
	frames   frameView           // the stored buffers its channel state may refer to (channel_state_frames.go)
}

// newAligner makes the barrier aligner of a task with inputs, or nil.
func (t *task) newAligner() error {
	co := t.job.opts.Checkpoint
	if !co.Enabled() || len(t.in.chans) == 0 {
		return nil
	}
	// The aligner always starts aligned: in unaligned mode barriers arrive
	// overtaking and switch each checkpoint to unaligned at its first barrier,
	// while the final checkpoint's in-order barriers still align.
	a, err := barriers.NewAligner(barriers.Config{Inputs: len(t.in.chans), Mode: barriers.Aligned,
		AlignedTimeout: co.AlignedTimeout, MaxConcurrent: co.MaxConcurrent, MaxInflightBytes: co.MaxInflightBytes})
	if err != nil {
		return fmt.Errorf("barrier aligner: %w", err)
	}
	t.aligner = a
	return nil
}

// now is the task's logical clock for the aligner.
func (t *task) now() time.Duration { return time.Since(t.job.started) }

// onTrigger starts checkpoint id at a source: snapshot, barrier, done. The
// final checkpoint's barrier is aligned; the stop checkpoint's overtakes, and
// the source reads nothing after it.
func (t *task) onTrigger(ctx actor.Context, id uint64, final, stop bool) {
	if t.phase.work == workFinished {
		return
	}
	unaligned := (t.job.opts.Checkpoint.Mode == barriers.Unaligned && !final) || stop
	if stop {
		t.move(evIdle)
	}
	if final {
		t.endOfInputWatermark(ctx) // the input has ended: every event-time timer fires before this checkpoint
	}
	t.takeSnapshot(id)
	t.out.barrier(ctx, id, unaligned, final)
	t.completeCheckpoint(ctx, id, 0, unaligned)
}

// onBarrier feeds a delivered barrier to the aligner and carries out its actions.
func (t *task) onBarrier(ctx actor.Context, input int, id, lastSeq uint64, overtook bool, overtaken []*Buffer) {
	if t.aligner == nil {
		t.fail(fmt.Errorf("barrier %d on input %d but checkpoints are off", id, input))
	}
	var acts []barriers.Action
	var err error
	if overtook && t.sizeLimited() {
		acts, err = t.aligner.OnBarrierBytes(input, id, lastSeq, t.overtakenBytes(input, overtaken), t.now())
	} else {
		acts, err = t.aligner.OnBarrier(input, id, lastSeq, overtook, t.now())
	}
	if err != nil {
		t.fail(fmt.Errorf("barrier %d on input %d: %w", id, input, err))
	}
	t.declineSuperseded(ctx, acts, id)
	t.carryOut(ctx, acts, overtaken)
	if !overtook {
		t.feedBlocked(ctx, input) // what its channel reported queued behind this barrier
	}
	t.feedRetired(ctx, id, false)
}

// declineSuperseded tells the coordinator at once that a checkpoint this task
// dropped because barrier by superseded it will not be acknowledged, rather
// than leaving it to time out.
func (t *task) declineSuperseded(ctx actor.Context, acts []barriers.Action, by uint64) {
	for _, a := range acts {
		if ab, ok := a.(barriers.Aborted); ok && ab.ID != by {
			ctx.Send(ctx.Parent(), &taskDeclineMsg{id: ab.ID, op: t.op.ID, instance: t.instance,
				reason: fmt.Sprintf("superseded by checkpoint %d", by)})
		}
	}
}

// onFinalBarrier feeds an in-order barrier of the final checkpoint to the
// aligner, which aligns it whatever the mode, and carries out its actions.
func (t *task) onFinalBarrier(ctx actor.Context, input int, id, lastSeq uint64) {
	if t.aligner == nil {
		t.fail(fmt.Errorf("final barrier %d on input %d but checkpoints are off", id, input))
	}
	acts, err := t.aligner.OnFinalBarrier(input, id, lastSeq, t.now())
	if err != nil {
		t.fail(fmt.Errorf("final barrier %d on input %d: %w", id, input, err))
	}
	t.declineSuperseded(ctx, acts, id)
	for _, a := range acts {
		if _, aligned := a.(barriers.Snapshot); aligned {
			t.endOfInputAtFinalBarrier(ctx)
		}
	}
	t.carryOut(ctx, acts, nil)
	t.feedRetired(ctx, id, true)
}

// carryOut performs the aligner's actions in order.
func (t *task) carryOut(ctx actor.Context, acts []barriers.Action, overtaken []*Buffer) {
	for _, a := range acts {
		switch a := a.(type) {
		case barriers.Snapshot:
			t.takeSnapshot(a.ID)
		case barriers.ForwardBarrier:
			t.out.barrier(ctx, a.ID, a.Unaligned, a.Final)
		case barriers.CaptureOvertaken:
			ck := t.ckpts[a.ID]
			if ck == nil {
				t.fail(fmt.Errorf("capture for checkpoint %d without its snapshot", a.ID))
			}
			for _, b := range overtaken {
				if b.Seq > a.AfterSeq {
					ck.capture(a.Input, b)
				}
			}
		case barriers.Unblock:
			t.sizes.forgetQueued(a.Inputs)
			for _, i := range a.Inputs {
				ctx.Send(t.in.chans[i].pid, &unblockMsg{id: a.ID})
			}
		case barriers.AlignInput:
			t.alignInput(ctx, a)
		case barriers.SwitchToUnaligned:
			if a.Reason != "" {
				t.log.Info().Uint64("checkpoint", a.ID).Str("reason", a.Reason).Msg("switched to unaligned")
			}
			for _, i := range a.Inputs {
				ctx.Send(t.in.chans[i].pid, &switchUnalignedMsg{id: a.ID})
			}
		case barriers.StartTimer:
			t.startAlignTimer(ctx, a.ID, a.At)
		case barriers.Complete:
			t.releaseTimer(a.ID)
			t.completeCheckpoint(ctx, a.ID, a.AlignmentDuration, a.Unaligned)
		case barriers.Aborted:
			t.releaseTimer(a.ID)
			t.dropCheckpoint(a.ID)
		case barriers.Ignored:
			t.log.Debug().Uint64("checkpoint", a.ID).Int("input", a.Input).Msg("stale barrier ignored")
		}
	}
}

// startAlignTimer fires alignTimeoutMsg for id at logical time at.
func (t *task) startAlignTimer(ctx actor.Context, id uint64, at time.Duration) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	timer := time.AfterFunc(at-t.now(), func() { root.Send(self, &alignTimeoutMsg{id: id}) })
	if t.timers == nil {
		t.timers = map[uint64]*time.Timer{}
	}
	if old := t.timers[id]; old != nil {
		old.Stop()
	}
	t.timers[id] = timer
	raise(&t.job.Metrics.MaxAlignTimers, int64(len(t.timers)))
}

// releaseTimer cancels the alignment timer of checkpoint id, which ended
// (completed, aborted or superseded); others in progress keep theirs.
func (t *task) releaseTimer(id uint64) {
	if tm := t.timers[id]; tm != nil {
		tm.Stop()
		delete(t.timers, id)
	}
}

// releaseTimers cancels the alignment timers of checkpoints up to id, which
// have ended (completed, aborted or superseded).
func (t *task) releaseTimers(id uint64) {
	for k, tm := range t.timers {
		if k <= id {
			tm.Stop()
			delete(t.timers, k)
		}
	}
}

// stopTimers cancels pending aligner timers.
func (t *task) stopTimers() {
	for _, tm := range t.timers {
		tm.Stop()
	}
	t.timers = nil
}

// takeSnapshot captures operator state and source offset for checkpoint id.
// The unprocessed rest of a buffer in progress, then restored channel state
// not yet replayed, belong to the new checkpoint's channel state first.
func (t *task) takeSnapshot(id uint64) {
	ck := &taskCheckpoint{id: id, offset: -1, captured: make([][]*Buffer, len(t.in.chans)), chain: t.chains.committed}
	t.dropSuperseded(id) // one superseded without an abort
	ck.frames = t.frames.viewFor(id)
	t.checkLease() // a two-phase sink seals its output here
	start := time.Now()
	if a, ok := t.inst.(plan.AsyncStateful); ok && !t.job.opts.Checkpoint.SyncSnapshots {
		p, err := a.SnapshotStateAsync(id)
		if err != nil {
			t.fail(fmt.Errorf("snapshot for checkpoint %d: %w", id, err))
		}
		ck.pending = p
	} else if st, ok := t.inst.(plan.Stateful); ok {
		snap, err := st.SnapshotState(id)
		if err != nil {
			t.fail(fmt.Errorf("snapshot for checkpoint %d: %w", id, err))
		}
		ck.snap = snap
	}
	raise(&t.job.Metrics.MaxSnapshotPauseNs, int64(time.Since(start)))
	if t.src != nil {
		ck.offset = t.src.Offset()
		ck.splits = storedSplits(t.src)
	}
	if t.ckpts == nil {
		t.ckpts = map[uint64]*taskCheckpoint{}
	}
	t.ckpts[id] = ck
	for i, c := range t.in.chans {
		if r := c.remainder(); r != nil {
			// A buffer processed in part: the snapshot holds its processed
			// records, the channel state the rest. Its batch is encoded off
			// the task's goroutine, so it is never recycled.
			c.cur.captured = true
			ck.capture(i, r)
			t.log.Debug().Uint64("checkpoint", id).Int("input", i).Uint64("seq", r.Seq).Int("records", r.Records.Len()).
				Msg("rest of a buffer in progress joins the channel state")
		}
		for _, b := range c.replay {
			ck.capture(i, b)
		}
	}
}

// captureIfNeeded records a buffer taken after the snapshot and before its
// input's barrier.
func (t *task) captureIfNeeded(input int, b *Buffer) {
	if t.aligner == nil {
		return
	}
	capture, err := t.aligner.OnBuffer(input, b.Seq)
	if err != nil {
		t.fail(fmt.Errorf("input %d: %w", input, err))
	}
	if t.sizeLimited() {
		t.sizes.learn(t, input, b)
	}
	if !capture {
		return
	}
	for _, id := range t.aligner.CapturedBy() {
		if ck := t.ckpts[id]; ck != nil {
			ck.capture(input, b)
		}
	}
}

// capture adds a buffer to the channel state of checkpoint ck. The buffer is
// then encoded off the task's goroutine, so its batch must not be recycled.
// With several checkpoints in progress one buffer can join each.
func (ck *taskCheckpoint) capture(input int, b *Buffer) {
	b.captured = true
	ck.captured[input] = append(ck.captured[input], b)
}

// completeCheckpoint encodes the task's part of checkpoint id and hands it to
// the job's uploader, which stores it and acknowledges to the coordinator.
func (t *task) completeCheckpoint(ctx actor.Context, id uint64, alignment time.Duration, unaligned bool) {
	ck := t.ckpts[id]
	delete(t.ckpts, id)
	if ck == nil {
		t.fail(fmt.Errorf("checkpoint %d completed without its snapshot", id))
	}
	ack := &taskAckMsg{id: id, op: t.op.ID, instance: t.instance, alignment: alignment, unaligned: unaligned}
	t.snapshottedForCommit(id)
	job, root := t.job, ctx.ActorSystem().Root
	jobPID := ctx.Parent()
	name := fmt.Sprintf("%s/%d/state", t.op.Name, t.instance)
	// Encoding and storing run off the task's goroutine: the snapshot bytes and
	// captured buffers are immutable, so the task goes on processing at once.
	if err := job.uploads.submit(func(c context.Context) {
		blob, snap, stats, ref, err := t.storeCheckpoint(c, id, name, ck)
		if blob != nil {
			defer t.blobs.give(blob.bytes) // stored or not, nothing reads it after this function
		}
		if err != nil {
			root.Send(jobPID, &taskDeclineMsg{id: id, op: ack.op, instance: ack.instance, reason: err.Error()})
			return
		}
		ack.stateB, ack.inflightB, ack.inflightRefB, ack.buffers = stats.stateBytes, stats.inflightBytes, stats.inflightRefBytes, stats.buffers
		var locs map[*Buffer]frameLoc
		snap.Channels, locs = blob.channelBlobs(id, ref, ck.frames, ck.captured)
		t.frames.record(id, locs)
		if ref.Name == "" {
			// Nothing stored (a stateless task whose channel state, if any,
			// earlier checkpoints stored): the manifest entry alone restores it.
			ack.snap = snap
		} else {
			ack.snap = t.linkChains(id, ck, blob.refs(ref, snap, ck.snap.KeyGroupCRCs))
			t.recordLocalSections(c, id, ack.snap)
		}
		root.Send(jobPID, ack)
	}); err != nil {
		if ck.pending != nil {
			ck.pending.Release()
		}
		ctx.Send(jobPID, &taskDeclineMsg{id: id, op: ack.op, instance: ack.instance, reason: err.Error()})
	}
}

// checkpointStats are the sizes reported with an acknowledgement: channel
// state written, and referred to in earlier checkpoints' blobs.
type checkpointStats struct {
	stateBytes, inflightBytes, inflightRefBytes, buffers int64
}

// taskBlob is one task's checkpoint data as sections of one blob.
type taskBlob struct {
	bytes    []byte           // the blob from offset base on
	base     int64            // written to the store before bytes: the key groups of a streamed blob
	groups   map[int][2]int64 // key group → [offset, size]
	operator *[2]int64
	channels []channelSection
	frames   []newFrame // the buffers it writes (channel_state_frames.go)
}

// channelSection is one input's channel state: its frames written at
// [off, off+size) and its parts in order.
type channelSection struct {
	input, buffers, records int
	off, size               int64
	rounds                  []store.ChannelRound
	parts                   []partLayout
}

// add appends a section to the blob and returns its [offset, size].
func (b *taskBlob) add(part []byte) [2]int64 {
	off := b.end()
	b.bytes = append(b.bytes, part...)
	return [2]int64{off, int64(len(part))}
}

// end is the size of the blob so far: where its next section starts.
func (b *taskBlob) end() int64 { return b.base + int64(len(b.bytes)) }

// at returns the bytes of the blob's section [off, off+size), which lies
// after base.
func (b *taskBlob) at(off, size int64) []byte {
	return b.bytes[off-b.base : off-b.base+size]
}

// refs turns the state sections into manifest references of the stored
// blob (channel state: channelBlobs); a key group's checksum is taken from
// crcs when the snapshot computed it as it encoded the group.
func (b *taskBlob) refs(whole store.BlobRef, snap store.TaskSnapshot, crcs map[int]uint32) store.TaskSnapshot {
	sec := func(s [2]int64) store.BlobRef {
		return store.Section(whole, s[0], b.at(s[0], s[1]))
	}
	if len(b.groups) > 0 {
		snap.KeyGroups = make(map[int]store.BlobRef, len(b.groups))
		for g, s := range b.groups {
			if crc, ok := crcs[g]; ok {
				snap.KeyGroups[g] = store.SectionSummed(whole, s[0], s[1], crc)
				continue
			}
			snap.KeyGroups[g] = sec(s)
		}
	}
	if b.operator != nil {
		ref := sec(*b.operator)
		snap.OperatorState = &ref
	}
	return snap
}

// encodeCheckpoint lays out key groups, operator state and channel state in
// one buffer, taken from the task's spare (blobBuffers): give it back once
// the blob is stored.
func (t *task) encodeCheckpoint(ck *taskCheckpoint) (*taskBlob, store.TaskSnapshot, checkpointStats, error) {
	var st checkpointStats
	b := &taskBlob{groups: map[int][2]int64{}}
	snap := store.TaskSnapshot{Operator: t.op.Name, Instance: t.instance, SourceOffset: ck.offset, Splits: ck.splits}
	switch {
	case ck.streamed > 0:
		// The snapshot wrote its key groups to the store already; the rest
		// follows them.
		b.base, b.bytes = ck.streamed, t.blobs.takeAny()
		maps.Copy(b.groups, ck.snap.Sections)
	case ck.laid != nil:
		// The snapshot appended its key groups to a spare buffer already.
		b.bytes = ck.laid
		maps.Copy(b.groups, ck.snap.Sections)
	default:
		groups := make([]int, 0, len(ck.snap.KeyGroups))
		for g := range ck.snap.KeyGroups {
			groups = append(groups, g)
		}
		sort.Ints(groups)
		size := len(ck.snap.Operator)
		for _, g := range groups {
			size += len(ck.snap.KeyGroups[g])
		}
		// The spare buffer of the previous checkpoint, when it fits the state
		// sections; channel state's frames are appended after them (and grow it
		// only when the queues hold more than the spare's slack).
		b.bytes = t.blobs.take(size)
		for _, g := range groups {
			b.groups[g] = b.add(ck.snap.KeyGroups[g])
		}
	}
	if ck.snap.Operator != nil {
		s := b.add(ck.snap.Operator)
		b.operator = &s
	}
	st.stateBytes = b.end()
	cs, err := t.encodeChannels(b, ck)
	if err != nil {
		return nil, snap, st, err
	}
	st.inflightBytes, st.inflightRefBytes, st.buffers = cs.written, cs.referenced, cs.buffers
	return b, snap, st, nil
}

// onCheckpointDone lets two-phase sinks commit what checkpoint id covers, and
// tells the job that a sink has: the job ends only after its sinks committed
// the final (or stop) checkpoint.
func (t *task) onCheckpointDone(ctx actor.Context, id uint64) {
	t.confirmChains(id)
	t.frames.confirm(id)
	if s, ok := t.inst.(plan.TwoPhaseSink); ok {
		t.checkLease()
		if err := s.CommitCheckpoint(id); err != nil {
			t.fail(fmt.Errorf("commit checkpoint %d: %w", id, err))
		}
		t.settledCommit(id, true)
	}
	if t.sink != nil {
		ctx.Send(ctx.Parent(), &sinkCommittedMsg{op: t.op.ID, instance: t.instance, gen: t.gen, id: id})
	}
}

// onCheckpointAbort drops the task's part of checkpoint id.
func (t *task) onCheckpointAbort(ctx actor.Context, id uint64) {
	if t.job.opts.Checkpoint.MaxConcurrent <= 1 {
		t.releaseTimers(id)
	} else {
		t.releaseTimer(id) // older checkpoints in progress go on
	}
	if t.aligner != nil {
		t.carryOut(ctx, t.aligner.Abort(id), nil)
	}
	t.frames.forget(id)
	t.settledCommit(id, false)
	for k := range t.ckpts {
		if k == id || (t.job.opts.Checkpoint.MaxConcurrent <= 1 && k < id) {
			t.dropCheckpoint(k)
		}
	}
}

// dropCheckpoint abandons checkpoint id in progress, letting go of the view
// of the state its asynchronous snapshot held.
func (t *task) dropCheckpoint(id uint64) {
	if ck := t.ckpts[id]; ck != nil && ck.pending != nil {
		ck.pending.Release()
	}
	delete(t.ckpts, id)
}

// dropSuperseded abandons, with one checkpoint in flight at a time, the
// checkpoints in progress older than id: a new snapshot supersedes them.
// With several in flight they go on (an older asynchronous snapshot stays
// the state at its own barrier).
func (t *task) dropSuperseded(id uint64) {
	if t.job.opts.Checkpoint.MaxConcurrent > 1 {
		return
	}
	for k := range t.ckpts {
		if k < id {
			t.dropCheckpoint(k)
		}
	}
}
