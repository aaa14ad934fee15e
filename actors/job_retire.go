package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/store"
)

// retiredMsg reports the checkpoints retention deleted with their blobs,
// whose node-local copies the other nodes can drop.
type retiredMsg struct {
	deleted []uint64
}

// retireCheckpoints deletes checkpoints ids, which fell out of the retained
// ones, off the actor's goroutine, keeping the blobs a retained checkpoint's
// key-group chains still read (store.Retire): those checkpoints lose their
// manifest only, and their blobs go once nothing retained reads them.
func (a *jobActor) retireCheckpoints(ctx actor.Context, ids []uint64) {
	st, job, log := a.job.opts.Checkpoint.Store, a.job.Plan.Name, a.job.log
	retained := a.ckpt.coord.Completed()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	if err := a.job.uploads.submit(func(c context.Context) {
		out, err := store.Retire(c, st, job, ids, retained)
		if err != nil {
			log.Warn().Err(err).Uints64("checkpoints", ids).Msg("retire old checkpoints")
		}
		if len(out.Kept) > 0 {
			log.Debug().Uints64("checkpoints", out.Kept).Msg("old checkpoints' blobs kept: retained checkpoints read them")
		}
		root.Send(self, &retiredMsg{deleted: out.Deleted})
	}); err != nil {
		log.Warn().Err(err).Uints64("checkpoints", ids).Msg("old checkpoints not deleted")
	}
}
