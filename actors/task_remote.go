package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/transport"
)

// listenChannel makes input channel pid (from instance from of edge)
// reachable from producers on other nodes: it subscribes the channel's data
// subject. Outside a cluster it does nothing.
func (t *task) listenChannel(pid *actor.PID, edge *plan.Edge, from int) error {
	r := t.job.node.remote
	if r == nil {
		return nil
	}
	name := t.job.Plan.Name
	t.registerRemote(pid, WireRef{Kind: refChannel, Edge: edge.ID, From: from, To: t.instance})
	unsub, err := r.listen(name, transport.DataSubject(name, edge.ID, from, t.instance), pid)
	if err != nil {
		return err
	}
	stop := func() { unsub(); r.unregister(pid) }
	t.unlistens = append(t.unlistens, stop)
	t.remote.noteChannel(pid, stop)
	return nil
}

// listenCredits makes the task reachable from other nodes: it subscribes
// the credit subjects of its outputs. Outside a cluster it does nothing.
func (t *task) listenCredits(ctx actor.Context) error {
	r := t.job.node.remote
	if r == nil {
		return nil
	}
	self := ctx.Self()
	t.registerRemote(self, WireRef{Kind: refTask, Op: t.op.ID, Instance: t.instance})
	t.unlistens = append(t.unlistens, func() { r.unregister(self) })
	return t.listenCreditsOf(ctx, t.op)
}

// registerRemote makes pid addressable from other nodes; a task restored
// from a checkpoint and its channels take each link's next message as its
// start.
func (t *task) registerRemote(pid *actor.PID, ref WireRef) {
	if t.restoreFrom != nil {
		t.job.node.remote.registerRestored(pid, ref)
		return
	}
	t.job.node.remote.register(pid, ref)
}

// unlisten drops the task's and its channels' subscriptions.
func (t *task) unlisten(actor.Context) {
	for _, u := range t.unlistens {
		u()
	}
	t.unlistens = nil
}
