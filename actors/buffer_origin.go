package actors

import (
	"time"

	"github.com/weirstream/weir/internal/plan"
)

// A buffer's origin (package rescale/flow says what it is) is set where
// records are written: around each call that hands the operator input
// records (their buffer's origin) or reads from a source (the read's start),
// the outputs note which channels' open batches the call wrote into, and a
// sealed batch takes the earliest origin of those that did.

// beginOrigin starts a call that writes records of origin.
func (o *outputs) beginOrigin(origin time.Time) {
	for _, oe := range o.edges {
		for c, ch := range oe.channels {
			ch.open.Begin(origin, pendingOf(oe.writer, c))
		}
	}
}

// endOrigin ends the call beginOrigin started.
func (o *outputs) endOrigin() {
	for _, oe := range o.edges {
		for c, ch := range oe.channels {
			ch.open.End(pendingOf(oe.writer, c))
		}
	}
}

// pendingOf is the records of channel c's open batch in w (0 for a writer
// that does not tell: its batches then take only the origin of a call they
// fill).
func pendingOf(w plan.EdgeWriter, c int) int {
	if p, ok := w.(interface{ Pending(c int) int }); ok {
		return p.Pending(c)
	}
	return 0
}
