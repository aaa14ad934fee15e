package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/transport"
)

// recvLinks checks the sequence of every link into this node's actors. It
// is a pure state machine (no goroutines, no clock, one owner: Remote,
// under its lock).
//
// Two things restart a link:
//   - The receiver was registered again (a restarted channel or task under
//     the same id; epoch counts its registrations), or registered the first
//     time on this node but restored from a checkpoint (its node restarted):
//     the next message of each link is taken as the link's start, whatever
//     its number, since the senders' numbering goes on and what the old
//     incarnation missed is of no concern to the new one, which is restored
//     from a checkpoint. (Nothing the new incarnation needs is missed: its
//     senders send only once every task of the region is restored and
//     subscribed, and they start only after the old incarnation stopped.)
//   - The sender moved the link to a higher gen (a new stand-in, or every
//     link to a node that joined again): its numbering restarts at 1, so a
//     baseline taken in a lower gen no longer applies. Messages of a lower
//     gen than the link's are stale.
type recvLinks struct {
	seqs  *transport.SeqChecker
	links map[string]recvLink // link key → its baseline at the receiver
}

// recvLink is a link's baseline at the receiver: numbers up to offset of
// gen were sent before the receiver's registration epoch began.
type recvLink struct {
	offset uint64
	epoch  int
	gen    int
}

func newRecvLinks() *recvLinks {
	return &recvLinks{seqs: transport.NewSeqChecker(), links: map[string]recvLink{}}
}

// check classifies message seq of gen on link key, received by an actor in
// its registration epoch (1 for the first registration, 0 if it is not
// registered); restored says it was restored from a checkpoint. Only a
// receiver's first registration of a fresh job demands that each link start
// at 1.
func (c *recvLinks) check(key string, epoch int, restored bool, gen int, seq uint64) transport.Verdict {
	l, seen := c.links[key]
	switch {
	case (seen && l.epoch != epoch) || (!seen && (epoch > 1 || restored)):
		// Registered again since the link's last message: this one
		// starts the link.
		c.seqs.Forget(key)
		l = recvLink{offset: seq - 1, epoch: epoch, gen: gen}
	case !seen:
		l = recvLink{epoch: epoch, gen: gen}
	case gen > l.gen:
		// The sender restarted the link at 1 in a new gen.
		l.offset, l.gen = 0, gen
	case gen < l.gen:
		return transport.Stale
	}
	c.links[key] = l
	if seq <= l.offset {
		return transport.Stale
	}
	return c.seqs.Check(key, gen, seq-l.offset)
}

// resync resumes link key at message seq of gen after a gap: it is taken
// as the next in order, and the messages lost before it are not waited
// for (the gap was reported).
func (c *recvLinks) resync(key string, gen int, seq uint64) {
	l := c.links[key]
	l.offset, l.gen = seq-1, gen
	c.links[key] = l
	c.seqs.Forget(key)
	c.seqs.Check(key, gen, 1)
}

// registerRestored is register for an actor restored from a checkpoint: it
// takes the next message of each link as the link's start (see recvLinks).
// Marked before it is registered, so no message is checked in between as if
// it were fresh.
func (r *Remote) registerRestored(pid *actor.PID, ref WireRef) {
	r.mu.Lock()
	r.restored[pid.Id] = true
	r.mu.Unlock()
	r.register(pid, ref)
}
