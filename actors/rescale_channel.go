package actors

import "github.com/asynkron/protoactor-go/actor"

// overtakeRescale delivers a rescale barrier at once, ahead of the queue,
// with copies of what it overtook: whatever the checkpoint mode, a rescale
// barrier never waits behind data and never blocks the channel (the
// consumer's rescale.Task sets aside what it must from the copies).
func (c *channel) overtakeRescale(ctx actor.Context, m *rescaleBarrierMsg) {
	over := c.overtakenUpTo(m.lastSeq, m.pending)
	ctx.Send(c.consumer, &rescaleBarrierOvertakeMsg{input: c.input, lastSeq: m.lastSeq, overtaken: over})
}
