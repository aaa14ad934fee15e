package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// stopCheckpointWait bounds how long a stopping job waits for its stop
// checkpoint to complete and be committed; after it, the job stops at the
// last completed checkpoint.
const stopCheckpointWait = time.Second

// stop stops the job without draining: sources stop reading at the stop
// checkpoint's barrier, which overtakes what is in flight; the job ends once
// every sink committed it. Without checkpoints the job ends at once.
func (a *jobActor) stop(ctx actor.Context, reason string) {
	if a.stopping || a.ended {
		return
	}
	a.stopping = true
	if a.ckpt == nil {
		a.job.log.Info().Str("reason", reason).Msg("stopping job: no checkpoints, in-flight records are dropped")
		a.end(ctx, nil)
		return
	}
	if a.ckpt.coord.FinalDone() {
		return // the final checkpoint is done: the job is about to finish
	}
	a.job.log.Info().Str("reason", reason).Msg("stopping job: taking a stop checkpoint")
	root, self := ctx.ActorSystem().Root, ctx.Self()
	a.stopTimer = time.AfterFunc(stopCheckpointWait, func() { root.Send(self, &stopDeadlineMsg{}) })
	a.carryOutCheckpoint(ctx, a.ckpt.coord.RequestStop(a.job.now()))
}

// stopStopTimer cancels the stop deadline; idempotent.
func (a *jobActor) stopStopTimer() {
	if a.stopTimer != nil {
		a.stopTimer.Stop()
		a.stopTimer = nil
	}
}

// onStopDeadline ends a stopping job whose stop checkpoint is not complete
// and committed in time: a restore resumes from the last completed one.
func (a *jobActor) onStopDeadline(ctx actor.Context) {
	if a.ended {
		return
	}
	var last uint64
	if done := a.ckpt.coord.Completed(); len(done) > 0 {
		last = done[len(done)-1]
	}
	a.job.log.Warn().Dur("waited", stopCheckpointWait).Uint64("last_completed", last).
		Msg("stop checkpoint not committed in time: stopping at the last completed checkpoint")
	a.end(ctx, nil)
}

// onSinkCommitted records a sink's commit and ends the job if that was the
// last thing it waited for.
func (a *jobActor) onSinkCommitted(ctx actor.Context, m *sinkCommittedMsg) {
	if a.stale(m.op, m.instance, m.gen) {
		return
	}
	if a.ckpt != nil {
		a.carryOutCheckpoint(ctx, a.ckpt.coord.OnSinkCommitted(a.idOf(m.op, m.instance), m.id))
	}
	a.maybeEnd(ctx)
}

// maybeEnd ends the job once it is done: after a stop checkpoint, when every
// sink committed it; otherwise when every task finished and, with
// checkpoints, every sink committed the final checkpoint.
func (a *jobActor) maybeEnd(ctx actor.Context) {
	if a.ended {
		return
	}
	c := a.ckpt
	switch {
	case c != nil && c.coord.StopDone():
		if c.coord.EndCommitted() {
			a.job.log.Info().Uint64("checkpoint", c.coord.EndID()).Dur("took", time.Since(a.started)).Msg("job stopped")
			a.end(ctx, nil)
		}
	case a.finished == a.total:
		if c != nil && !c.coord.EndCommitted() {
			return
		}
		a.job.log.Info().Dur("took", time.Since(a.started)).Msg("job finished")
		a.end(ctx, nil)
	}
}

// failWhileEnding handles a task failure once the job is ending (final
// checkpoint completed, or stopping). If every sink has committed the final or
// stop checkpoint, the output is complete and the job ends well; otherwise the
// run fails, naming the cause: it never reports success with output left
// uncommitted.
func (a *jobActor) failWhileEnding(ctx actor.Context, err error) {
	c := a.ckpt
	switch {
	case c.coord.EndCommitted():
		a.job.log.Warn().Err(err).Uint64("checkpoint", c.coord.EndID()).Msg("failure after every sink committed the last checkpoint: finishing")
		a.end(ctx, nil)
	case a.stopping:
		a.end(ctx, fmt.Errorf("while stopping, before every sink committed the stop checkpoint: %w", err))
	default:
		a.end(ctx, fmt.Errorf("after the final checkpoint %d, before every sink committed it: %w", c.coord.EndID(), err))
	}
}
