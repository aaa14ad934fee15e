package transport

import (
	"strconv"
	"sync"
)

// Verdict is what SeqChecker.Check says about one received message.
type Verdict int

// Verdicts. The zero Verdict is invalid, so a forgotten assignment is not
// mistaken for InOrder.
const (
	InOrder   Verdict = iota + 1 // the next message of the link: deliver it
	Duplicate                    // seq <= last accepted of the same gen: already delivered, drop it
	Gap                          // seq > last+1, or a new gen not starting at 1: messages are missing
	Stale                        // gen lower than one already seen: an old incarnation, drop it
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case InOrder:
		return "in-order"
	case Duplicate:
		return "duplicate"
	case Gap:
		return "gap"
	case Stale:
		return "stale"
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// SeqChecker checks per-link sequence numbers on the receiving side. It is
// a pure state machine: no goroutines, no clock, not safe for concurrent
// use (one owner, e.g. the receiving actor). The zero value is ready to use.
//
// Only an InOrder message advances a link. After a Gap every later message
// of that gen is a Gap too, until Reset or a higher gen: a lost message can
// never be silently skipped over. Duplicate is only ever returned for a
// (gen, seq) that was already accepted as InOrder. Seq 0 is never valid and
// reads as Duplicate (FromMsg rejects it anyway).
type SeqChecker struct {
	links map[string]seqLink
}

type seqLink struct {
	gen  int
	last uint64 // last seq accepted InOrder in gen; 0 if none
}

// NewSeqChecker returns an empty checker.
func NewSeqChecker() *SeqChecker {
	return &SeqChecker{links: make(map[string]seqLink)}
}

// Check classifies message seq of incarnation gen on link from. from names
// the link at the receiver: the sender endpoint (Envelope.From) for a
// checker owned by one receiving endpoint, or LinkKey(From, To) for a
// checker shared by several. A gen higher than any seen on the link starts
// it afresh (seq must be 1, else Gap) and makes every lower gen Stale.
func (c *SeqChecker) Check(from string, gen int, seq uint64) Verdict {
	if c.links == nil {
		c.links = make(map[string]seqLink)
	}
	l, seen := c.links[from]
	switch {
	case !seen || gen > l.gen:
		l = seqLink{gen: gen}
	case gen < l.gen:
		return Stale
	}
	var v Verdict
	switch {
	case seq <= l.last:
		v = Duplicate
	case seq == l.last+1:
		l.last = seq
		v = InOrder
	default:
		v = Gap
	}
	c.links[from] = l
	return v
}

// Reset restarts link from at seq 1 while keeping the highest gen seen, so
// older incarnations stay Stale. Use it only when the sender restarts the
// link at 1 in the same gen with nothing in flight; a new gen is the safer
// way to restart a link, since leftovers of the old gen then read as Stale.
func (c *SeqChecker) Reset(from string) {
	if l, ok := c.links[from]; ok {
		l.last = 0
		c.links[from] = l
	}
}

// Forget drops everything known about link from (e.g. after the link is
// removed by a rescale); its next message is checked as a first contact.
func (c *SeqChecker) Forget(from string) {
	delete(c.links, from)
}

// LinkKey names the link From→To, as Publisher keys its sequences.
func LinkKey(from, to string) string {
	return from + "→" + to
}

// SeqStamper hands out sequence numbers per link on the sending side. It is
// safe for concurrent use; the zero value is ready to use.
type SeqStamper struct {
	mu    sync.Mutex
	links map[string]seqLink
}

// Next returns the next sequence number of link: 1, 2, 3, …
func (s *SeqStamper) Next(link string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.links == nil {
		s.links = make(map[string]seqLink)
	}
	l := s.links[link]
	l.last++
	s.links[link] = l
	return l.last
}

// NextGen is Next for a sender of incarnation gen: when gen differs from
// the gen of the link's previous NextGen call, the link restarts at 1, as
// SeqChecker expects of a new gen.
func (s *SeqStamper) NextGen(link string, gen int) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.links == nil {
		s.links = make(map[string]seqLink)
	}
	l, ok := s.links[link]
	if !ok || l.gen != gen {
		l = seqLink{gen: gen}
	}
	l.last++
	s.links[link] = l
	return l.last
}

// Reset restarts link at 1.
func (s *SeqStamper) Reset(link string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.links, link)
}
