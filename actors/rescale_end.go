package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/rescale"
)

// rescaleInputEnded returns why a rescale cannot start because the job's
// input has ended (its final checkpoint completed: the sources finish and
// the job ends once its output is committed), or nil.
func (a *jobActor) rescaleInputEnded() error {
	if a.ckpt == nil || !a.ckpt.coord.FinalDone() {
		return nil
	}
	return fmt.Errorf("rescale: the final checkpoint %d completed and the job is finishing: %w", a.ckpt.coord.EndID(), rescale.ErrInputEnded)
}

// rescaleCheckpointEndedActions hands the end of checkpoint id to the
// rescale machine: the final checkpoint refuses a rescale waiting for it,
// any other one starts it.
func (a *jobActor) rescaleCheckpointEndedActions(id uint64) []rescale.Action {
	if a.ckpt != nil && a.ckpt.coord.FinalDone() && a.ckpt.coord.EndID() == id {
		return a.rs.coord.FinalCheckpointCompleted(a.job.now(), id)
	}
	return a.rs.coord.CheckpointEnded(a.job.now(), id)
}

// rescaleRefused answers a rescale the machine refused (it waited for the
// final checkpoint): nothing of it ran, and checkpoints are no longer held
// back for it.
func (a *jobActor) rescaleRefused(ctx actor.Context, act rescale.Refused) {
	r := a.rs
	a.job.log.Info().Uint64("rescale", act.Rescale).Str("reason", act.Err.Error()).Msg("rescale refused")
	r.run.reply <- rescaleReply{err: fmt.Errorf("rescale %d refused: %w", act.Rescale, act.Err)}
	r.run = nil
	if a.ckpt != nil {
		a.carryOutCheckpoint(ctx, a.ckpt.coord.Resume(a.job.now()))
	}
}
