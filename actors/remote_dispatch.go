package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/transport"
)

// dispatch delivers one received envelope to the local actor it names. Bad
// input is logged with its subject and counted once (r.bad), never delivered
// and never a crash; a lost message (a gap in the link's sequence) fails the receiving
// actor, which makes its region restart from the latest checkpoint.
func (r *Remote) dispatch(job, subject string, e *transport.Envelope) {
	r.counters.Links.Add(transport.Received, transport.EndpointNode(e.From), r.node, len(e.Payload))
	j, ok := r.job(job)
	if !ok || e.Job != job {
		r.counters.Malformed.Add(1)
		r.badLog.Event(r.log.Warn(), "no part", time.Now()).Str("subject", subject).Str("job", e.Job).
			Msg("message for a job without a part on this node: dropped")
		return
	}
	// Decode before the sequence check: a message whose body does not
	// decode is bad input and uses no sequence number, so a forged one with
	// the right number cannot shadow the genuine message that follows it.
	r.mu.Lock()
	to, registered := r.local[e.To]
	r.mu.Unlock()
	b, err := unmarshalBody(e.Payload)
	if err != nil {
		r.bad(subject, fmt.Errorf("decode %s body from %s: %w", e.Type, e.From, err))
		return
	}
	if !r.admit(j, subject, e, b.Epoch) {
		return
	}
	drop := !registered && (b.K == kData || b.K == kBarrier || b.K == kRsBarrier)
	if !registered {
		to = WireRef{Node: r.node, ID: e.To}
	}
	var m any
	if !drop {
		if m, err = r.decode(j, to, b); err != nil {
			r.bad(subject, fmt.Errorf("decode %s from %s: %w", b.K, e.From, err))
			return
		}
	}
	r.mu.Lock()
	verdict := r.checkSeq(e)
	r.mu.Unlock()
	pid := actor.NewPID(r.sys.Address(), e.To)
	switch verdict {
	case transport.Duplicate, transport.Stale:
		r.counters.BadSeq.Add(1)
		r.badLog.Event(r.log.Warn(), "duplicate", time.Now()).Str("subject", subject).Str("from", e.From).Uint64("seq", e.Seq).
			Str("verdict", verdict.String()).Msg("duplicate or stale message: dropped")
		return
	case transport.Gap:
		r.counters.BadSeq.Add(1)
		reason := fmt.Sprintf("message lost on link %s → %s (seq %d on %s)", e.From, e.To, e.Seq, subject)
		r.log.Error().Str("subject", subject).Str("from", e.From).Uint64("seq", e.Seq).Msg("gap in the link sequence: failing the receiver")
		r.sys.Root.Send(pid, &linkFailedMsg{from: e.From, reason: reason})
		if !registered || to.Kind == refTask || to.Kind == refChannel {
			return // restarted by the recovery, with a fresh baseline
		}
		// A job-level receiver (a node's part, the coordinator) outlives the
		// recovery the failure starts: its link resumes at this message,
		// which is delivered, else every later message would be a gap too.
		r.mu.Lock()
		r.recv.resync(transport.LinkKey(e.From, e.To), e.Gen, e.Seq)
		r.mu.Unlock()
	}
	if drop {
		r.log.Debug().Str("subject", subject).Str("to", e.To).Msg("data for an actor that is gone: dropped")
		return
	}
	if _, stop := m.(*stopActorMsg); stop {
		r.sys.Root.Stop(pid)
		return
	}
	r.sys.Root.Send(pid, m)
}
