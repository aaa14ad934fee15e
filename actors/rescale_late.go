package actors

import (
	"fmt"
	"slices"
)

// lateBarriers are a task's inputs whose rescale barrier had not arrived
// when the rescale committed. A producer's switch sends its barrier on
// every channel it has, but the rescale waits only for the consumers it
// sent records to before: on a forward edge, wired from every producer to
// every consumer, the barrier on a channel the producer never used can
// reach its consumer after the commit (or during the next rescale, ahead
// of that one's barrier on the same channel). It carries nothing, and is
// taken here instead of failing the task or feeding the next rescale.
type lateBarriers map[int]bool

// expect notes the old inputs of rs whose barrier the machine has not
// taken: a barrier deferred behind a buffer in progress is dropped with
// rs, so it counts as taken, and inputs retired by an earlier rescale
// (their producers ended) deliver none.
func (l *lateBarriers) expect(rs *taskRescale, retired []int) {
	deferred := map[int]bool{}
	for _, m := range rs.deferred {
		if b, ok := m.(*rescaleBarrierOvertakeMsg); ok {
			deferred[b.input] = true
		}
	}
	for i := range rs.m.Config().Inputs {
		if !slices.Contains(rs.barred, i) && !deferred[i] && !slices.Contains(retired, i) {
			if *l == nil {
				*l = lateBarriers{}
			}
			(*l)[i] = true
		}
	}
}

// take reports whether a barrier on input is a late one, and forgets it.
func (l lateBarriers) take(input int) bool {
	if !l[input] {
		return false
	}
	delete(l, input)
	return true
}

// takeLateBarrier takes the barrier of a committed rescale: it must carry
// nothing this task has not taken already.
func (t *task) takeLateBarrier(b *rescaleBarrierOvertakeMsg) {
	if b.input < 0 || b.input >= len(t.in.chans) {
		t.fail(fmt.Errorf("late rescale barrier on input %d of %d", b.input, len(t.in.chans)))
		return
	}
	if taken := takenSeq(t.in.chans[b.input]); b.lastSeq > taken || len(b.overtaken) > 0 {
		t.fail(fmt.Errorf("rescale barrier on input %d after seq %d arrived after the commit, with %d buffers this task had not taken (it took up to seq %d)",
			b.input, b.lastSeq, len(b.overtaken), taken))
		return
	}
	t.log.Debug().Int("input", b.input).Uint64("last_seq", b.lastSeq).Msg("rescale: a barrier of a committed rescale on an unused channel taken")
}
