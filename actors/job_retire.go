package actors

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/store"
)

// retiredMsg reports the checkpoints retention deleted with their blobs,
// whose node-local copies the other nodes can drop.
type retiredMsg struct {
	deleted []uint64
}

// retireAtEndBound is how long a job's end waits for the retire of the
// checkpoints its last checkpoint pushed out of the retained ones.
const retireAtEndBound = 5 * time.Second

// retireCheckpoints deletes checkpoints ids, which fell out of the retained
// ones, off the actor's goroutine, keeping the blobs a retained checkpoint's
// key-group chains still read (store.Retire): those checkpoints lose their
// manifest only, and their blobs go once nothing retained reads them.
//
// Retires run one at a time; ids asked for while one runs are retired after
// it. Two at once raced: one read the manifest of a checkpoint the other was
// deleting, and a JetStream read of an object deleted under it waited until
// its context ended, so the job's end waited for the uploads' timeout.
func (a *jobActor) retireCheckpoints(ctx actor.Context, ids []uint64) {
	ck := a.ckpt
	if ck.retiring {
		ck.retireNext = append(ck.retireNext, ids...)
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	ck.retiring = a.submitRetire(ids, func(deleted []uint64) { root.Send(self, &retiredMsg{deleted: deleted}) })
}

// submitRetire queues the retire of ids on the retirer, then calls then
// (if not nil) with the checkpoints it deleted; it reports whether the
// retire was queued.
func (a *jobActor) submitRetire(ids []uint64, then func(deleted []uint64)) bool {
	st, job, log := a.job.opts.Checkpoint.Store, a.job.Plan.Name, a.job.log
	retained := a.ckpt.coord.Completed()
	if err := a.ckpt.retirer.submit(func(c context.Context) {
		out, err := store.Retire(c, st, job, ids, retained)
		if err != nil {
			log.Warn().Err(err).Uints64("checkpoints", ids).Msg("retire old checkpoints")
		}
		if len(out.Kept) > 0 {
			log.Debug().Uints64("checkpoints", out.Kept).Msg("old checkpoints' blobs kept: retained checkpoints read them")
		}
		if then != nil {
			then(out.Deleted)
		}
	}); err != nil {
		log.Warn().Err(err).Uints64("checkpoints", ids).Msg("old checkpoints not deleted")
		return false
	}
	return true
}

// finishRetires, as the job ends, queues the retires asked for and lets
// them finish, for at most retireAtEndBound: the last checkpoint's retire
// used to be cancelled by the end it led to, which left a checkpoint more
// than --retain in the store and logged a warning at every stop.
func (a *jobActor) finishRetires() {
	ck := a.ckpt
	if ck == nil || ck.retirer == nil {
		return
	}
	if next := ck.retireNext; len(next) > 0 {
		ck.retireNext = nil
		a.submitRetire(next, nil)
	}
	ck.retirer.drain(retireAtEndBound)
}
