// Package mailbox is a protoactor-go mailbox with a priority lane, so that
// barriers and control messages overtake the data buffers queued ahead of
// them (DESIGN.md invariant 3).
//
// A user message whose type implements Priority goes to the priority lane;
// every other user message goes to the normal lane. The decision is made on
// the unwrapped message: a *actor.MessageEnvelope (what Request and a
// context's Request post) is classified by its Message, and the envelope
// itself is what the actor receives, so Sender keeps working.
//
// Delivery order: system messages first, then every queued priority message,
// then normal messages; FIFO within each lane. Apart from the priority lane the
// mailbox behaves like protoactor's default mailbox: it honours
// *actor.SuspendMailbox and *actor.ResumeMailbox, recovers a panic in the
// actor and hands it to the invoker's EscalateFailure with the message being
// processed, and runs on the props' dispatcher, yielding with runtime.Gosched
// after each dispatcher-throughput batch of messages.
//
// Both lanes are unbounded: flow control in weir lives in the channels'
// credits, which bound what can be queued here.
//
//	props := actor.PropsFromProducer(newTask, actor.WithMailbox(mailbox.New()))
package mailbox
