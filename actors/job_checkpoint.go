package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/checkpoints"
	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/store"
)

// CheckpointStat describes one completed checkpoint.
type CheckpointStat struct {
	ID        uint64
	Mode      string // aligned or unaligned (a timed-out aligned one is unaligned)
	Duration  time.Duration
	Alignment time.Duration // longest alignment of any task
	// StateBytes is the full size of the operator state the checkpoint
	// restores from: with incremental checkpoints, every section of its
	// key groups' chains, whichever checkpoint wrote them.
	// StateWrittenBytes is the operator state this checkpoint wrote (its
	// deltas and whole sections); without incremental checkpoints the two
	// are equal.
	StateBytes        int64
	StateWrittenBytes int64
	InflightBytes     int64 // channel state written
	// InflightRefBytes is channel state referred to in earlier checkpoints'
	// blobs instead of written again (buffers still queued since then).
	InflightRefBytes int64
	InflightBuffers  int64
	Final            bool
	Completed        time.Time // when the coordinator completed it
}

// checkpointLog collects a job's completed checkpoints; safe for any goroutine.
type checkpointLog struct {
	mu    sync.Mutex
	stats []CheckpointStat
}

func (l *checkpointLog) add(s CheckpointStat) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats = append(l.stats, s)
}

// Checkpoints lists the job's completed checkpoints so far.
func (j *Job) Checkpoints() []CheckpointStat {
	j.ckptLog.mu.Lock()
	defer j.ckptLog.mu.Unlock()
	return append([]CheckpointStat(nil), j.ckptLog.stats...)
}

// jobCheckpoints is the coordinator's checkpoint side: the pure bookkeeping
// state machine plus what the actor needs to carry out its actions.
type jobCheckpoints struct {
	coord       *checkpoints.Coordinator
	acks        map[uint64]map[taskid.ID]*taskAckMsg // per checkpoint in flight
	triggeredAt map[uint64]time.Time
	// retiring is set while a retire of old checkpoints runs; the ids of
	// the retires asked for meanwhile wait in retireNext. One at a time: a
	// retire reads the manifests of checkpoints another would be deleting.
	retiring   bool
	retireNext []uint64
	retirer    *uploader // one worker: retires, in order
	// aborted holds the latest aborted checkpoints (abortedKept of them):
	// a task whose upload for one ends after the abort acknowledges it
	// late, and its blob, stored after the checkpoint was deleted, is
	// deleted then.
	aborted []uint64
}

// abortedKept is how many aborted checkpoints the job remembers for late
// acknowledgements: far more than can be in flight at once.
const abortedKept = 64

// noteAborted remembers that checkpoint id was aborted.
func (c *jobCheckpoints) noteAborted(id uint64) {
	if len(c.aborted) == abortedKept {
		c.aborted = append(c.aborted[:0], c.aborted[1:]...)
	}
	c.aborted = append(c.aborted, id)
}

// wasAborted reports whether checkpoint id is one of the aborted ones
// remembered.
func (c *jobCheckpoints) wasAborted(id uint64) bool {
	return slices.Contains(c.aborted, id)
}

// ended forgets checkpoint id's acknowledgements and trigger time.
func (c *jobCheckpoints) ended(id uint64) {
	delete(c.acks, id)
	delete(c.triggeredAt, id)
}

// startCheckpoints creates the bookkeeping once tasks are deployed.
func (a *jobActor) startCheckpoints() error {
	co := a.job.opts.Checkpoint
	if !co.Enabled() {
		return nil
	}
	tasks := a.topo.Tasks
	last, after := uint64(0), uint64(0)
	if co.FirstID > 0 {
		last, after = co.FirstID-1, co.FirstID-1
	}
	if co.Restore != nil {
		last = co.Restore.CheckpointID
	}
	c, err := checkpoints.New(checkpoints.Config{Interval: co.Interval, Timeout: co.Timeout, Retain: co.Retain,
		Tasks: tasks, Sources: a.topo.Sources, Sinks: a.topo.Sinks, After: after, MaxConcurrent: co.MaxConcurrent}, last, a.job.now())
	if err != nil {
		return fmt.Errorf("checkpoint coordinator: %w", err)
	}
	a.ckpt = &jobCheckpoints{coord: c, acks: map[uint64]map[taskid.ID]*taskAckMsg{}, triggeredAt: map[uint64]time.Time{}}
	a.job.uploads = newUploader(a.job.node.quit, 2, 2*len(tasks)+16, co.Timeout)
	a.ckpt.retirer = newUploader(a.job.node.quit, 1, 4, co.Timeout)
	return nil
}

// now is the job's logical clock.
func (j *Job) now() time.Duration { return time.Since(j.started) }

// onCheckpointMsg handles checkpoint traffic; it reports whether m was one.
func (a *jobActor) onCheckpointMsg(ctx actor.Context, m any) bool {
	if a.ckpt == nil {
		switch m := m.(type) {
		case *coordTickMsg:
			return true
		case *holdCheckpointsMsg:
			close(m.applied)
			return true
		}
		return false
	}
	c, now := a.ckpt, a.job.now()
	var acts []checkpoints.Action
	switch m := m.(type) {
	case *coordTickMsg:
		if a.sv != nil {
			a.carryOutSupervision(ctx, a.sv.sup.Tick(now))
		}
		a.rescaleTick(ctx)
		if c.coord.FinalDone() || a.restarting() || !a.wired {
			return true // no checkpoint before the job is wired, nor while a region is being restored
		}
		acts = c.coord.Tick(now)
	case *taskAckMsg:
		op := a.job.Plan.Operators[m.op]
		id := taskID(op, m.instance)
		if err := a.rescaleLayoutChannels(id, &m.snap); err != nil {
			a.end(ctx, err)
			return true
		}
		if acks, ok := c.acks[m.id]; ok {
			acks[id] = m
		}
		if c.wasAborted(m.id) {
			// Its upload ended after the abort, and may have stored a
			// blob after the checkpoint was deleted.
			a.job.log.Debug().Uint64("checkpoint", m.id).Str("task", taskName(op, m.instance)).Msg("late acknowledgement of an aborted checkpoint: deleting it again")
			a.deleteCheckpoints([]uint64{m.id})
		}
		acts = c.coord.OnAck(m.id, id, now)
	case *taskDeclineMsg:
		op := a.job.Plan.Operators[m.op]
		a.job.log.Warn().Uint64("checkpoint", m.id).Str("task", taskName(op, m.instance)).Str("reason", m.reason).Msg("task declined checkpoint")
		acts = c.coord.OnDecline(m.id, taskID(op, m.instance), m.reason, now)
	case *retiredMsg:
		a.pruneParts(m.deleted)
		c.retiring = false
		if next := c.retireNext; len(next) > 0 {
			c.retireNext = nil
			a.retireCheckpoints(ctx, next)
		}
		return true
	case *manifestDoneMsg:
		if m.err != nil {
			acts = c.coord.OnManifestFailed(m.id, m.err, now)
		} else {
			acts = c.coord.OnManifestWritten(m.id, now)
		}
		if a.sv != nil {
			defer func() { a.carryOutSupervision(ctx, a.sv.sup.OnManifestWriteEnded()) }()
		}
	case *holdCheckpointsMsg:
		c.coord.Hold(m.on)
		a.job.log.Info().Bool("held", m.on).Msg("periodic checkpoints held or let go on")
		close(m.applied)
		return true
	case *sourceIdleMsg:
		if a.stale(m.op, m.instance, m.gen) {
			return true
		}
		acts = c.coord.OnSourceIdle(a.idOf(m.op, m.instance), now)
		if len(acts) > 0 {
			a.job.log.Info().Msg("sources done: taking the final checkpoint")
		}
	default:
		return false
	}
	a.carryOutCheckpoint(ctx, acts)
	return true
}

// carryOutCheckpoint performs the bookkeeping's actions.
func (a *jobActor) carryOutCheckpoint(ctx actor.Context, acts []checkpoints.Action) {
	c := a.ckpt
	for _, act := range acts {
		switch act := act.(type) {
		case checkpoints.Trigger:
			c.acks[act.ID] = map[taskid.ID]*taskAckMsg{}
			c.triggeredAt[act.ID] = time.Now()
			raise(&a.job.Metrics.MaxCheckpointsInFlight, int64(len(c.coord.InFlight())))
			a.job.log.Debug().Uint64("checkpoint", act.ID).Bool("final", act.Final).Msg("checkpoint triggered")
			a.toSources(ctx, &triggerMsg{id: act.ID, final: act.Final, stop: act.Stop})
		case checkpoints.WriteManifest:
			if a.sv != nil {
				a.sv.sup.OnManifestWriteStarted() // no region restarts until it is written
			}
			a.writeManifest(ctx, act.ID)
		case checkpoints.Completed:
			a.recordCompleted(act)
			if a.sv != nil {
				a.sv.sup.OnCheckpointCompleted(act.ID) // restarts resume from it; backoff starts over
			}
			c.ended(act.ID)
			a.toAll(ctx, &checkpointDoneMsg{id: act.ID})
			a.rescaleCheckpointEnded(ctx, act.ID)
		case checkpoints.Aborted:
			c.ended(act.ID)
			c.noteAborted(act.ID)
			a.job.log.Warn().Uint64("checkpoint", act.ID).Str("reason", act.Reason).Msg("checkpoint aborted")
			a.toAll(ctx, &checkpointAbortMsg{id: act.ID})
			a.deleteCheckpoints([]uint64{act.ID}) // its blobs will never have a manifest
			a.rescaleCheckpointEnded(ctx, act.ID)
		case checkpoints.Delete:
			a.retireCheckpoints(ctx, act.IDs)
		case checkpoints.FinalDone:
			a.toSources(ctx, &finishSourceMsg{})
		case checkpoints.StopDone:
			a.maybeEnd(ctx)
		case checkpoints.Ignored:
			a.job.log.Debug().Uint64("checkpoint", act.ID).Str("task", act.Task.String()).Str("reason", act.Reason).Msg("checkpoint message ignored")
		}
	}
	a.job.inFlight.Store(int32(len(c.coord.InFlight())))
}

// writeManifest assembles the manifest from the acknowledgements and writes it
// off the actor's goroutine.
func (a *jobActor) writeManifest(ctx actor.Context, id uint64) {
	p := a.job.Plan
	m := &store.Manifest{Job: p.Name, CheckpointID: id, Fingerprint: p.Fingerprint(), MaxParallelism: p.MaxParallelism,
		Parallelism: map[string]int{}, KeyGroups: map[string][]int32{}, KeyGroupEpochs: map[string]uint64{}, Mode: a.modeName(id),
		TriggeredUnixNano: a.ckpt.triggeredAt[id].UnixNano(), CompletedUnixNano: time.Now().UnixNano()}
	for _, op := range p.Operators {
		m.Parallelism[op.Name] = op.Parallelism
		if op.Table != nil {
			m.KeyGroups[op.Name] = op.Table.Owners
			if op.Table.Epoch != 0 {
				m.KeyGroupEpochs[op.Name] = op.Table.Epoch
			}
		}
		for i := 0; i < op.Parallelism; i++ {
			ack := a.ckpt.acks[id][taskID(op, i)]
			if ack == nil {
				ctx.Send(ctx.Self(), &manifestDoneMsg{id: id, err: fmt.Errorf("no acknowledgement from %s", taskName(op, i))})
				return
			}
			m.Tasks = append(m.Tasks, ack.snap)
		}
	}
	st, self, root := a.job.opts.Checkpoint.Store, ctx.Self(), ctx.ActorSystem().Root
	if err := a.job.uploads.submit(func(c context.Context) {
		err := st.CommitManifest(c, m)
		root.Send(self, &manifestDoneMsg{id: id, err: err})
	}); err != nil {
		ctx.Send(self, &manifestDoneMsg{id: id, err: fmt.Errorf("write manifest: %w", err)})
	}
}

// modeName is the mode checkpoint id ran in (from the acks).
func (a *jobActor) modeName(id uint64) string {
	for _, ack := range a.ckpt.acks[id] {
		if ack.unaligned {
			return barriers.Unaligned.String()
		}
	}
	return barriers.Aligned.String()
}

// recordCompleted logs a completed checkpoint and keeps its metrics.
func (a *jobActor) recordCompleted(act checkpoints.Completed) {
	s := CheckpointStat{ID: act.ID, Mode: a.modeName(act.ID), Final: act.Final, Completed: time.Now()}
	if t, ok := a.ckpt.triggeredAt[act.ID]; ok {
		s.Duration = time.Since(t)
	}
	for _, ack := range a.ckpt.acks[act.ID] {
		s.Alignment = max(s.Alignment, ack.alignment)
		s.StateWrittenBytes += ack.stateB
		s.StateBytes += ack.stateFullBytes()
		s.InflightBytes += ack.inflightB
		s.InflightRefBytes += ack.inflightRefB
		s.InflightBuffers += ack.buffers
	}
	a.job.ckptLog.add(s)
	a.job.taskState.record(act.ID, a.ckpt.acks[act.ID], func(op, i int) string { return taskName(a.job.Plan.Operators[op], i) })
	a.job.node.metrics.ObserveCheckpoint(a.job.Plan.Name, s.Mode, s.Duration, s.Alignment, s.StateBytes, s.StateWrittenBytes, s.InflightBytes)
	a.job.log.Info().Uint64("checkpoint", s.ID).Str("mode", s.Mode).Dur("duration", s.Duration).
		Dur("alignment", s.Alignment).Int64("state_bytes", s.StateBytes).Int64("state_written_bytes", s.StateWrittenBytes).
		Int64("inflight_bytes", s.InflightBytes).Int64("inflight_ref_bytes", s.InflightRefBytes).
		Int64("inflight_buffers", s.InflightBuffers).Bool("final", s.Final).Msg("checkpoint completed")
}

// deleteCheckpoints removes checkpoints beyond the retained ones.
func (a *jobActor) deleteCheckpoints(ids []uint64) {
	st, job, log := a.job.opts.Checkpoint.Store, a.job.Plan.Name, a.job.log
	ids = append([]uint64(nil), ids...)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if err := a.job.uploads.submit(func(c context.Context) {
		for _, id := range ids {
			if err := st.Delete(c, job, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				log.Warn().Err(err).Uint64("checkpoint", id).Msg("delete old checkpoint")
			}
		}
	}); err != nil {
		log.Warn().Err(err).Uints64("checkpoints", ids).Msg("old checkpoints not deleted")
	}
	a.pruneParts(ids)
}

// toSources sends m to every source task.
func (a *jobActor) toSources(ctx actor.Context, m any) {
	for _, op := range a.job.Plan.Operators {
		if op.Kind == plan.KindSource {
			for _, pid := range a.tasks[op.ID] {
				if pid != nil {
					ctx.Send(pid, m)
				}
			}
		}
	}
}

// toAll sends m to every task.
func (a *jobActor) toAll(ctx actor.Context, m any) {
	for _, row := range a.tasks {
		for _, pid := range row {
			if pid != nil {
				ctx.Send(pid, m)
			}
		}
	}
}
