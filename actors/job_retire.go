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
//
// Retires run one at a time; ids asked for while one runs are retired after
// it. Two at once raced: one read the manifest of a checkpoint the other was
// deleting, and a JetStream read of an object deleted under it waits until
// its context ends, so the job's end waited for the uploads' timeout.
func (a *jobActor) retireCheckpoints(ctx actor.Context, ids []uint64) {
	ck := a.ckpt
	if ck.retiring {
		ck.retireNext = append(ck.retireNext, ids...)
		return
	}
	st, job, log := a.job.opts.Checkpoint.Store, a.job.Plan.Name, a.job.log
	retained := ck.coord.Completed()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	ck.retiring = true
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
		ck.retiring = false
		log.Warn().Err(err).Uints64("checkpoints", ids).Msg("old checkpoints not deleted")
	}
}
