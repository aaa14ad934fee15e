package actors

import (
	"fmt"
	"slices"
)

// lateBarriers are a task's inputs whose rescale barrier had not arrived
// when the rescale committed. A producer's switch sends its barrier on
// every channel it has, but the commit waits only for the changed tasks
// and the fences of the groups that move: a consumer whose parallelism
// does not change may get the barrier of a producer no fence waits for
// after the commit (or during the next rescale, ahead of that one's
// barrier on the same channel): on a channel a forward edge never used,
// or behind records the consumer has not taken yet. Such a consumer only
// needs its first barrier (to switch its own outputs, which it did), and
// a barrier's overtaken buffers are copies (the records still come
// through the channel), so the late barrier is taken here instead of
// failing the task or feeding the next rescale.
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

// takeLateBarrier takes the barrier of a committed rescale.
func (t *task) takeLateBarrier(b *rescaleBarrierOvertakeMsg) {
	if b.input < 0 || b.input >= len(t.in.chans) {
		t.fail(fmt.Errorf("late rescale barrier on input %d of %d", b.input, len(t.in.chans)))
		return
	}
	t.log.Debug().Int("input", b.input).Uint64("last_seq", b.lastSeq).Int("overtaken", len(b.overtaken)).
		Uint64("taken_seq", takenSeq(t.in.chans[b.input])).Msg("rescale: a barrier that came after the commit taken")
}
