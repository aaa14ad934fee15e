package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// restoreTimeout bounds reading one task's state from the store.
const restoreTimeout = 2 * time.Minute

// findTaskSnapshot returns the manifest's part for one task instance.
func findTaskSnapshot(m *store.Manifest, op string, instance int) (*store.TaskSnapshot, bool) {
	for i := range m.Tasks {
		if m.Tasks[i].Operator == op && m.Tasks[i].Instance == instance {
			return &m.Tasks[i], true
		}
	}
	return nil, false
}

// restore loads the task's state from the checkpoint being restored: key
// groups it owns, operator state, source offset and channel state to replay.
// The task takes no input, timer or barrier before restore returns, with
// every key group's section read and verified and handed to the instance
// (in batches, as they are read), the operator state restored, the source
// positioned and the channel state queued for replay. An instance that
// keeps key groups encoded (plan.LazyRestoring) decodes each when it first
// needs it, and the rest on its goroutine, started here.
func (t *task) restore(actx actor.Context) error {
	m := t.restoreFrom
	if m == nil {
		return nil
	}
	wrap := func(what string, err error) error {
		return fmt.Errorf("restore checkpoint %d, task %s, %s: %w", m.CheckpointID, t.name, what, err)
	}
	ts, ok := findTaskSnapshot(m, t.op.Name, t.instance)
	if !ok {
		if m.Parallelism[t.op.Name] == t.op.Parallelism {
			return wrap("manifest", fmt.Errorf("no entry for this task"))
		}
		// An instance the checkpoint did not have: key groups only.
		ts = &store.TaskSnapshot{Operator: t.op.Name, Instance: t.instance, SourceOffset: -1}
	}
	start := time.Now()
	var read store.ReadStats
	ownChannels, redistributed := ts.Channels, 0
	if channelsReshaped(m, t.op) {
		ownChannels = nil
		ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		n, stats, err := t.restoreRedistributed(ctx, m)
		cancel()
		read.Add(stats)
		if err != nil {
			return wrap("redistributed channel state", err)
		}
		redistributed = n
	}
	// Every section this task needs, each named by what it holds so that a
	// node's local copy serves it whichever instance wrote it.
	var secs []store.SectionRequest
	var groups []int
	if t.op.Keyed {
		var refs []store.BlobRef
		groups, refs = keyGroupSections(m, t.op.Name, t.ownedGroups())
		for i, g := range groups {
			secs = append(secs, store.SectionRequest{Key: store.KeyGroupKey(t.op.Name, g), Ref: refs[i]})
		}
	}
	if ts.OperatorState != nil {
		secs = append(secs, store.SectionRequest{Key: store.OperatorStateKey(t.op.Name, ts.Instance), Ref: *ts.OperatorState})
	}
	removed := removedStaged(m, t.op, t.instance)
	for _, r := range removed {
		secs = append(secs, store.SectionRequest{Key: store.OperatorStateKey(t.op.Name, r.Instance), Ref: *r.OperatorState})
	}
	for _, cb := range ownChannels {
		if cb.Input < 0 || cb.Input >= len(t.in.chans) {
			return wrap(fmt.Sprintf("channel state of input %d", cb.Input), fmt.Errorf("task has %d inputs", len(t.in.chans)))
		}
	}
	chanSecs := ownChannelSections(m, t.op.Name, ts.Instance, ownChannels)
	secs = append(secs, chanSecs...)
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	// Key groups are restored a few at a time as their sections are read,
	// each section in a buffer of its own that the restored state adopts
	// (restore_groups.go), so the task never holds its state twice; operator
	// and this checkpoint's channel-state sections are kept for after.
	stateful, _ := t.inst.(plan.Stateful)
	rest := make([][]byte, len(secs)-len(groups))
	var loadErr error // of restoring a key group, returned by EachSectionKept as it is
	batch := newGroupBatch(stateful, m.CheckpointID)
	stats, err := store.EachSectionKept(ctx, t.job.opts.Checkpoint.Store, m.Job, m.CheckpointID, secs, func(i int, data []byte) error {
		if i >= len(groups) {
			rest[i-len(groups)] = data // EachSectionKept: ours to keep
			return nil
		}
		// EachSectionKept verified data against the reference's CRC.
		if err := batch.add(groups[i], data, secs[i].Ref.CRC32C); err != nil {
			loadErr = wrap("operator", err)
			return loadErr
		}
		return nil
	})
	if err == nil {
		if err := batch.flush(); err != nil {
			loadErr = wrap("operator", err)
		}
	}
	read.Add(stats)
	var se *store.SectionError
	if errors.As(err, &se) && se.Index < len(secs) {
		return wrap(sectionWhat(secs[se.Index].Key), err)
	}
	if loadErr != nil {
		return loadErr
	}
	if err != nil {
		return wrap("state", err)
	}
	if t.op.Keyed {
		// Key groups stored incrementally: whole sections, then deltas in order.
		chains := keyGroupChains(m, t.op.Name, t.ownedGroups())
		stats, err := t.restoreChains(ctx, m, chains, stateful)
		read.Add(stats)
		if err != nil {
			return err
		}
		for g := range chains {
			groups = append(groups, g)
		}
	}
	snap := plan.Snapshot{CheckpointID: m.CheckpointID}
	data := rest
	if ts.OperatorState != nil {
		snap.Operator, data = data[0], data[1:]
	}
	have := make(map[store.BlobRef][]byte, len(chanSecs))
	for i, s := range chanSecs {
		have[s.Ref] = data[i]
	}
	if stateful != nil {
		if err := stateful.RestoreState(snap); err != nil {
			return wrap("operator", err)
		}
	}
	if err := t.recoverRemovedStaged(m.CheckpointID, removed, data[:len(removed)]); err != nil {
		return wrap("operator", err)
	}
	data = data[len(removed):]
	offset := ts.SourceOffset
	if ss, ok := t.src.(plan.SplitSource); ok && t.op.Splittable {
		if offset, err = t.restoreSplits(m, ss); err != nil {
			return wrap("source splits", err)
		}
	} else if t.src != nil {
		if err := t.src.SeekTo(offset); err != nil {
			return wrap(fmt.Sprintf("source offset %d", offset), err)
		}
	}
	if len(ownChannels) > 0 {
		chans, locs, stats, err := readChannelState(ctx, t.job.opts.Checkpoint.Store, m, t.op.Name, ts.Instance, ownChannels, have,
			func(cb store.ChannelBlob) plan.BatchCodec { return t.op.Inputs[t.in.chans[cb.Input].edgeIndex].Codec })
		read.Add(stats)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.name, err)
		}
		stored := map[*Buffer]frameLoc{}
		for i, cb := range ownChannels {
			c := t.in.chans[cb.Input]
			for k, b := range chans[i] {
				buf := replayBuffer(b, false)
				c.replay = append(c.replay, buf)
				if loc := locs[i][k]; loc.ckpt != 0 {
					loc.input = cb.Input
					stored[buf] = loc
				}
			}
		}
		t.frames.restored(m.CheckpointID, stored)
	}
	took := time.Since(start)
	rec := TaskRestore{Task: t.name, Checkpoint: m.CheckpointID, Read: read, Took: took, Start: start, Decoded: took}
	_, encoded := t.encodedAfterRestore()
	if encoded > 0 {
		rec.Decoded = 0 // when the goroutine is done (onDecoded)
	}
	t.job.restLog.add(rec)
	t.decodeInBackground(actx, m.CheckpointID, start)
	t.job.noteEvent(EventRestore, t.name, restoreDetail(m.CheckpointID, read))
	t.job.node.metrics.ObserveRestore(t.job.Plan.Name, took)
	t.log.Info().Uint64("checkpoint", m.CheckpointID).Int("key_groups", len(groups)).
		Int("channels", len(ownChannels)+redistributed).Int64("offset", offset).
		Int64("local_bytes", read.LocalBytes).Int64("remote_bytes", read.RemoteBytes).
		Int("local_sections", read.LocalSections).Int("remote_sections", read.RemoteSections).
		Int("key_groups_encoded", encoded).Dur("reading", read.Took).Dur("took", took).Msg("restored from checkpoint")
	return nil
}

// sectionWhat says what a section holds for this task's errors: "key group
// 17", "operator state" or "channel state of input 2".
func sectionWhat(k store.SectionKey) string {
	switch k.Kind {
	case store.KindKeyGroup:
		return fmt.Sprintf("key group %d", k.KeyGroup)
	case store.KindOperatorState:
		return "operator state"
	default:
		return fmt.Sprintf("channel state of input %d", k.Input)
	}
}

// ownedGroups is the key groups this task owns in its operator's key-group
// table; nil for an operator without one.
func (t *task) ownedGroups() []int {
	if t.op.Table == nil {
		return nil
	}
	return t.op.Table.GroupsOf(t.instance)
}
