package actors

import "time"

// partTarget is about how long one operator call may take before the task
// looks at its mailbox again: a barrier, a control message or a stop waits
// about this long, or one record if a record takes longer, or one call's
// fixed cost if the operator has one (a sink's round trip per batch).
const partTarget = time.Millisecond

// maxPart bounds the records per operator call the sizer grows to.
const maxPart = 1 << 20

// partSizer picks how many records of a buffer a task hands its operator in
// one call, so that a call takes about partTarget: the whole buffer when the
// operator is fast (the common case: one call per buffer), one record at a
// time when a record takes longer than partTarget. It models a call as a
// fixed cost plus a cost per record, fitted to the last two calls of
// different sizes, so an operator whose calls cost the same whatever their
// size is not cut into one-record calls: calls are allowed to spend as long
// on records as on the fixed cost. It starts at one record, so not even the
// first buffer of a slow operator holds a barrier back for long, and tries
// two records next (a slow operator's one call of two records) to tell the
// two costs apart. Pure: durations are passed in.
type partSizer struct {
	n    int        // records per call; 0 before the first observation
	last partSample // the newest call
	prev partSample // the newest call of another size than last (records 0: none)
}

// partSample is one operator call: its records and how long it took.
type partSample struct {
	records int
	took    time.Duration
}

// size is the number of records, at most remaining, for the next call.
func (s *partSizer) size(remaining int) int {
	return min(max(s.n, 1), remaining)
}

// observe records that a call of records records took took and sizes the
// next calls. The size follows the cost down at once and up at most twice per
// call, so one quick call (a sleeping operator's quiet stretch) does not make
// the next call long; with no cost per record measurable it doubles.
func (s *partSizer) observe(records int, took time.Duration) {
	if records <= 0 {
		return
	}
	if s.last.records != 0 && s.last.records != records {
		s.prev = s.last
	}
	s.last = partSample{records: records, took: max(took, 0)}
	grow := min(2*max(s.n, records), maxPart)
	want := grow
	switch perRecord, fixed, ok := s.fit(); {
	case !ok:
		// One size seen so far: try twice the size next, to tell the cost
		// per record from the fixed cost.
		want = min(2*records, maxPart)
	case perRecord > 0:
		budget := max(partTarget, fixed)
		want = int(min(int64(budget)/int64(perRecord), maxPart))
	}
	s.n = max(min(want, grow), 1)
}

// fit estimates the cost per record and per call from the last two calls of
// different sizes; ok is false before there are two.
func (s *partSizer) fit() (perRecord, fixed time.Duration, ok bool) {
	if s.prev.records == 0 {
		return 0, 0, false
	}
	a, b := s.prev, s.last
	perRecord = (b.took - a.took) / time.Duration(b.records-a.records)
	if perRecord <= 0 {
		return 0, min(a.took, b.took), true
	}
	fixed = max(b.took-perRecord*time.Duration(b.records), 0)
	return perRecord, fixed, true
}
