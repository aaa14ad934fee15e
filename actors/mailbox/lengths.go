package mailbox

import "github.com/asynkron/protoactor-go/actor"

// Lengths are the messages queued in a mailbox's lanes.
type Lengths struct {
	Normal   int `json:"normal"`
	Priority int `json:"priority"`
	System   int `json:"system"`
}

// LengthsReceiver is a priority message that wants the lane lengths of the
// mailbox delivering it: just before delivery the mailbox calls
// MailboxLengths with what is still queued behind it. Only priority messages
// are stamped, so the normal lane's hot path is untouched.
type LengthsReceiver interface {
	Priority
	MailboxLengths(Lengths)
}

// lengths reads the lanes' counters.
func (m *mailbox) lengths() Lengths {
	return Lengths{Normal: int(m.normalMessages.Load()), Priority: int(m.prioMessages.Load()), System: int(m.sysMessages.Load())}
}

// stamp gives a LengthsReceiver (bare or in an envelope) the lane lengths.
func (m *mailbox) stamp(msg any) {
	if env, ok := msg.(*actor.MessageEnvelope); ok {
		msg = env.Message
	}
	if r, ok := msg.(LengthsReceiver); ok {
		r.MailboxLengths(m.lengths())
	}
}
