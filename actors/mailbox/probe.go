package mailbox

import "sync/atomic"

// Probe lets an actor in the middle of long work ask whether messages that
// should interrupt it are waiting in its own mailbox: priority or system
// messages. It costs two atomic loads. A Probe is bound to one mailbox.
type Probe struct {
	m atomic.Pointer[mailbox]
}

// Waiting reports whether a priority or system message is queued. It is false
// for a nil Probe and before its mailbox exists.
func (p *Probe) Waiting() bool {
	if p == nil {
		return false
	}
	m := p.m.Load()
	return m != nil && (m.prioMessages.Load() > 0 || m.sysMessages.Load() > 0)
}

// WithProbe binds p to the mailbox the producer makes; give each spawn its
// own New(WithProbe(p)) with a new Probe.
func WithProbe(p *Probe) Option {
	return func(c *config) { c.probe = p }
}
