package flow

import "time"

// A buffer's origin is when its source task read the earliest of the
// records it was made from, on the clock of the node that holds the buffer
// (the zero time: not known). A source's records take the time its read
// began; an operator's output buffer takes the earliest origin of the input
// buffers whose processing wrote records into it (Open); across nodes a
// buffer travels with its age (AgeAt) and takes its origin back on the
// receiving node's clock (OriginOf), so the ages of its hops add up and no
// two machines' clocks are compared. The wire between nodes is the one
// stretch not counted.

// Earliest is the earlier of two origins; a zero one is not known and
// yields to the other.
func Earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// AgeAt is how old a buffer of origin is at now, in ns, for the wire: 0
// for an unknown origin, at least 1 for a known one.
func AgeAt(origin, now time.Time) int64 {
	if origin.IsZero() {
		return 0
	}
	return max(1, int64(now.Sub(origin)))
}

// OriginOf is the origin of a buffer age ns old at now (zero for age 0:
// not known).
func OriginOf(age int64, now time.Time) time.Time {
	if age <= 0 {
		return time.Time{}
	}
	return now.Add(-time.Duration(age))
}

// Open is a producer's record of the origin of one output channel's open
// (not yet sealed) batch. The producer calls Begin before it hands the
// operator (or reads from its source) records of one origin, Sealed for
// every batch of the channel sealed, and End after the call: a batch gets
// the origin of each call that wrote records into it, which End tells by
// the channel's pending records (more than at Begin, or any after a batch
// sealed during the call). A record an operator writes while handed an
// input buffer takes that buffer's origin; one written outside any call (a
// timer, a watermark, the end of input) takes none. The zero value is an
// empty batch and no call.
type Open struct {
	origin  time.Time // earliest origin of the open batch's records
	cur     time.Time // the origin of the call in progress
	inCall  bool
	pending int  // the batch's records at Begin
	sealed  bool // a batch sealed during the call
}

// Begin starts a call that writes records of origin cur; the channel's
// open batch holds pending records.
func (o *Open) Begin(cur time.Time, pending int) {
	o.cur, o.inCall, o.pending, o.sealed = cur, true, pending, false
}

// Sealed is the origin of the channel's batch being sealed now; the next
// batch starts with none. A batch sealed during a call (it became full)
// holds at least the record just written, of the call's origin.
func (o *Open) Sealed() time.Time {
	origin := o.origin
	if o.inCall {
		origin = Earliest(origin, o.cur)
		o.sealed = true
	}
	o.origin = time.Time{}
	return origin
}

// End ends the call; the channel's open batch holds pending records.
func (o *Open) End(pending int) {
	if o.inCall && pending > 0 && (o.sealed || pending > o.pending) {
		o.origin = Earliest(o.origin, o.cur)
	}
	o.cur, o.inCall, o.sealed = time.Time{}, false, false
}
