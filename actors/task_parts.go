package actors

import "time"

// partTarget is about how long one operator call may take before the task
// looks at its mailbox again: a barrier, a control message or a stop waits at
// most this long (or one record, if a record takes longer).
const partTarget = time.Millisecond

// maxPart bounds the records per operator call the sizer grows to.
const maxPart = 1 << 20

// partSizer picks how many records of a buffer a task hands its operator in
// one call, so that a call takes about partTarget: the whole buffer when the
// operator is fast (the common case: one call per buffer), one record at a
// time when a record takes longer than partTarget. It learns from the calls
// it sees and starts at one record, so not even the first buffer of a slow
// operator holds a barrier back. Pure: durations are passed in.
type partSizer struct {
	n int // records per call; 0 before the first observation
}

// size is the number of records, at most remaining, for the next call.
func (s *partSizer) size(remaining int) int {
	n := max(s.n, 1)
	return min(n, remaining)
}

// observe records that a call of records records took took. The size follows
// the measured cost per record down at once, and up at most twice per call,
// so a single fast call (a sleeping operator's quiet stretch, a batch of
// cheap records) does not make the next call long.
func (s *partSizer) observe(records int, took time.Duration) {
	if records <= 0 {
		return
	}
	want := maxPart
	if took > 0 {
		want = int(min(int64(partTarget)*int64(records)/int64(took), maxPart))
	}
	want = max(want, 1)
	if grow := 2 * max(s.n, records); want > grow {
		want = min(grow, maxPart)
	}
	s.n = want
}
