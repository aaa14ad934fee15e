package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/transport"
)

// rescaleSubs are the subscriptions of a task on a cluster that live
// rescales add and drop: its input channels' data subjects (an input from
// a removed instance stops listening, so an instance added again later
// with the same index has its subject to itself), and how many consumer
// instances of each output edge it takes credit from.
type rescaleSubs struct {
	channels map[string]func() // input channel actor id → stop listening
	credits  map[int]int       // output edge id → consumer instances listened to
}

// noteChannel records how input channel pid stops listening.
func (s *rescaleSubs) noteChannel(pid *actor.PID, stop func()) {
	if s.channels == nil {
		s.channels = map[string]func(){}
	}
	s.channels[pid.Id] = stop
}

// unlistenRetired stops the subscriptions of inputs from removed
// instances: they delivered all they will.
func (t *task) unlistenRetired(inputs []int) {
	for _, i := range inputs {
		if i < 0 || i >= len(t.in.chans) {
			continue
		}
		id := t.in.chans[i].pid.Id
		if stop, ok := t.remote.channels[id]; ok {
			stop()
			delete(t.remote.channels, id)
		}
	}
}

// listenCreditsOf subscribes the credit subjects of op's outputs (the
// task's operator, now or after a rescale) that the task does not listen to
// yet: one per consumer instance. Outside a cluster it does nothing.
func (t *task) listenCreditsOf(ctx actor.Context, op *plan.Operator) error {
	r := t.job.node.remote
	if r == nil {
		return nil
	}
	if t.remote.credits == nil {
		t.remote.credits = map[int]int{}
	}
	name, self := t.job.Plan.Name, ctx.Self()
	for _, edge := range op.Outputs {
		for j := t.remote.credits[edge.ID]; j < edge.To.Parallelism; j++ {
			unsub, err := r.listen(name, transport.CreditSubject(name, edge.ID, t.instance, j), self)
			if err != nil {
				return err
			}
			t.unlistens = append(t.unlistens, unsub)
			t.remote.credits[edge.ID] = j + 1
		}
	}
	return nil
}

// ownerOnly is the one actor id a subscription to subject delivers to, ""
// for any. A channel's data subject names its producer and consumer
// instances, not the channel actor: after a live rescale removes an
// instance and a later one adds it back, the old consumer's input channel
// may still listen on the subject the new one listens on, until it stops.
// Each subscription then delivers only to its own channel, so a buffer is
// not dispatched twice (a duplicate) or out of order.
func ownerOnly(subject string, owner *actor.PID) string {
	s, err := transport.ParseSubject(subject)
	if err != nil || s.Kind != transport.KindData || owner == nil {
		return ""
	}
	return owner.Id
}
