package barriers

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// The simulator models producers with sequence numbers, channels that deliver
// barriers in order or overtaking, a coordinator with up to MaxConcurrent
// checkpoints in flight and a task that processes what its channels deliver and carries out the
// Aligner's actions. It checks the capture invariant at every Complete.

const simStep = time.Millisecond

// simBufferBytes is the size of every simulated buffer, for the size trigger.
const simBufferBytes = 100

// reportBlocked tells the Aligner how much data is queued behind the barrier
// at blocked input j.
func (s *sim) reportBlocked(j int) bool {
	in := s.in[j]
	if !in.blocked || s.cfg.MaxInflightBytes == 0 {
		return false
	}
	var bytes int64
	for _, it := range in.queue {
		if it.barrier == 0 {
			bytes += simBufferBytes
		}
	}
	s.apply(s.a.OnBlockedBytes(j, bytes, s.now))
	return false // a report alone is no progress
}

// simItem is a queued buffer (barrier == 0) or barrier.
type simItem struct {
	seq     uint64
	barrier uint64
	lastSeq uint64
}

// simInput is one producer and its channel (channel queue and mailbox as one).
type simInput struct {
	queue    []simItem       // sent, not yet taken by the task
	sent     uint64          // last seq sent
	blocked  bool            // aligned channel stopped after an in-order barrier
	overtake map[uint64]bool // barrier ids switched to overtaking delivery
	inOrder  map[uint64]bool // barrier ids sent back to in-order delivery (AlignInput)
	passed   map[uint64]bool // barrier ids the channel overtook with before one was sent back
	inject   []uint64        // barrier ids the producer must inject, in order
}

// simCheckpoint is what the task holds for one checkpoint id.
type simCheckpoint struct {
	atSnapshot []uint64   // processed per input at Snapshot, nil before
	lastSeq    []uint64   // barrier lastSeq per input, 0 until delivered
	hasBarrier []bool     // barrier delivered per input
	state      [][]uint64 // channel state per input, in capture order
	forwards   int
	captures   int  // CaptureOvertaken actions
	switched   bool // SwitchToUnaligned seen
}

type sim struct {
	t     testing.TB
	where string // printed with every failure (seed, config)
	cfg   Config
	a     *Aligner
	now   time.Duration
	// overtaking makes the channels deliver barriers overtaking in Aligned
	// mode too, as a task of an unaligned job sees them: its aligner starts
	// aligned, and every overtaking barrier switches its checkpoint.
	overtaking bool
	// passRequeued makes barriers queued behind one that falls back to
	// alignment reach the task before it comes again, as when its channel
	// had sent them overtaking before it learnt of the fallback.
	passRequeued bool

	in        []*simInput
	processed []uint64

	cks       map[uint64]*simCheckpoint
	timers    []StartTimer
	completes []Complete
	aborts    []uint64 // Aborted ids
	ignored   int

	// coordinator
	lastID   uint64
	inflight []uint64 // at the coordinator, ascending
	notices  []uint64 // abort notices not yet delivered to the task

	// the barrier being delivered, for CaptureOvertaken and AlignInput
	requeued  bool // it fell back to alignment
	curInput  int
	curID     uint64
	curCopies []uint64
}

func newSim(t testing.TB, where string, cfg Config) *sim {
	t.Helper()
	a, err := NewAligner(cfg)
	if err != nil {
		t.Fatalf("%s: NewAligner: %v", where, err)
	}
	s := &sim{t: t, where: where, cfg: cfg, a: a, processed: make([]uint64, cfg.Inputs),
		cks: map[uint64]*simCheckpoint{}, curInput: -1}
	for range cfg.Inputs {
		s.in = append(s.in, &simInput{overtake: map[uint64]bool{}, inOrder: map[uint64]bool{}, passed: map[uint64]bool{}})
	}
	return s
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s (t=%v): %s", s.where, s.now, fmt.Sprintf(format, args...))
}

func (s *sim) ck(id uint64) *simCheckpoint {
	c := s.cks[id]
	if c == nil {
		n := s.cfg.Inputs
		c = &simCheckpoint{lastSeq: make([]uint64, n), hasBarrier: make([]bool, n), state: make([][]uint64, n)}
		s.cks[id] = c
	}
	return c
}

// emit makes producer j send its next buffer.
func (s *sim) emit(j int) {
	in := s.in[j]
	in.sent++
	in.queue = append(in.queue, simItem{seq: in.sent})
}

// trigger starts a checkpoint at the coordinator if fewer than
// MaxConcurrent are in flight.
func (s *sim) trigger() bool {
	if len(s.inflight) >= max(1, s.cfg.MaxConcurrent) {
		return false
	}
	s.lastID++
	s.inflight = append(s.inflight, s.lastID)
	for _, in := range s.in {
		in.inject = append(in.inject, s.lastID)
	}
	return true
}

// injectBarrier makes producer j inject its pending barrier.
func (s *sim) injectBarrier(j int) bool {
	in := s.in[j]
	if len(in.inject) == 0 {
		return false
	}
	in.queue = append(in.queue, simItem{barrier: in.inject[0], lastSeq: in.sent})
	in.inject = in.inject[1:]
	return true
}

// coordAbort aborts the pick-th (modulo) checkpoint in flight at the
// coordinator; producers that have not injected it yet drop it unless keep
// says otherwise.
func (s *sim) coordAbort(pick int, keep func(j int) bool) bool {
	if len(s.inflight) == 0 {
		return false
	}
	id := s.inflight[pick%len(s.inflight)]
	for j, in := range s.in {
		if k := slices.Index(in.inject, id); k >= 0 && !keep(j) {
			in.inject = slices.Delete(in.inject, k, k+1)
		}
	}
	s.notices = append(s.notices, id)
	s.inflight = slices.DeleteFunc(s.inflight, func(x uint64) bool { return x == id })
	return true
}

// deliverNotice hands the oldest abort notice to the task.
func (s *sim) deliverNotice() bool {
	if len(s.notices) == 0 {
		return false
	}
	id := s.notices[0]
	s.notices = s.notices[1:]
	s.apply(s.a.Abort(id))
	return true
}

// next returns the position of the buffer input j would process next, -1 if
// none. A barrier sent back to in-order delivery (AlignInput) does not stop
// the data behind it, which its channel delivered already (the barrier had
// overtaken it): the Aligner says whether it must wait (Holds), as the task
// asks it.
func (s *sim) next(j int) int {
	in := s.in[j]
	for p, it := range in.queue {
		switch {
		case it.barrier == 0:
			if s.a.Holds(j, it.seq) {
				return -1
			}
			return p
		case !in.inOrder[it.barrier]:
			return -1
		}
	}
	return -1
}

func (s *sim) canProcess(j int) bool { return s.next(j) >= 0 }

// process makes the task process the next buffer of input j.
func (s *sim) process(j int) bool {
	p := s.next(j)
	if p < 0 {
		return false
	}
	in := s.in[j]
	seq := in.queue[p].seq
	in.queue = slices.Delete(in.queue, p, p+1)
	capture, err := s.a.OnBuffer(j, seq)
	if err != nil {
		s.fatalf("OnBuffer(%d, %d): %v", j, seq, err)
	}
	s.processed[j] = seq
	if capture != (len(s.a.CapturedBy()) > 0) {
		s.fatalf("buffer %d of input %d: capture=%v, captured by %v", seq, j, capture, s.a.CapturedBy())
	}
	for _, id := range s.a.CapturedBy() {
		c, ok := s.cks[id]
		if !ok || c.atSnapshot == nil {
			s.fatalf("buffer %d of input %d captured for %d before its snapshot", seq, j, id)
		}
		if c.hasBarrier[j] {
			s.fatalf("buffer %d of input %d captured for %d after its barrier", seq, j, id)
		}
		c.state[j] = append(c.state[j], seq)
	}
	s.checkBlocked()
	return true
}

// barrierAt returns the position of the first barrier queued on input j
// the channel may deliver: a barrier sent back to in-order delivery is
// passed by a newer one the channel had sent overtaking before (passed).
func (s *sim) barrierAt(j int) int {
	in := s.in[j]
	for p, it := range in.queue {
		if it.barrier == 0 {
			continue
		}
		if in.inOrder[it.barrier] && !in.overtake[it.barrier] && s.passedAfter(j, p) {
			continue
		}
		return p
	}
	return -1
}

// passedAfter says the next barrier queued on input j after position p was
// already on its way overtaking when an older one was sent back.
func (s *sim) passedAfter(j, p int) bool {
	in := s.in[j]
	for _, it := range in.queue[p+1:] {
		if it.barrier != 0 {
			return in.passed[it.barrier] && s.overtakes(j, it.barrier)
		}
	}
	return false
}

// overtakes says if input j's channel delivers barrier id overtaking.
func (s *sim) overtakes(j int, id uint64) bool {
	in := s.in[j]
	if in.overtake[id] {
		return true
	}
	return (s.cfg.Mode == Unaligned || s.overtaking) && !in.inOrder[id]
}

func (s *sim) canDeliver(j int) bool {
	in := s.in[j]
	if in.blocked {
		return false
	}
	p := s.barrierAt(j)
	return p == 0 || (p > 0 && s.overtakes(j, in.queue[p].barrier))
}

// deliver hands the first queued barrier of input j to the task. inOrder asks
// a channel that may overtake to deliver in order when the barrier is at the
// head anyway.
func (s *sim) deliver(j int, inOrder bool) bool {
	if !s.canDeliver(j) {
		return false
	}
	in := s.in[j]
	p := s.barrierAt(j)
	b := in.queue[p]
	overtook := s.overtakes(j, b.barrier) && !(p == 0 && inOrder)
	var copies []uint64
	for _, it := range in.queue[:p] {
		if it.barrier == 0 {
			copies = append(copies, it.seq)
		}
	}
	in.queue = slices.Delete(in.queue, p, p+1)
	if !overtook && (s.cfg.Mode == Aligned || s.cfg.MaxInflightBytes > 0) {
		// An aligned channel stops after an in-order barrier; so does any
		// channel once barriers may fall back to alignment (as a task actor's
		// channels always do).
		in.blocked = true
	}
	var acts []Action
	var err error
	if overtook && s.cfg.MaxInflightBytes > 0 {
		var bytes int64
		for _, seq := range copies {
			if seq > s.processed[j] {
				bytes += simBufferBytes
			}
		}
		acts, err = s.a.OnBarrierBytes(j, b.barrier, b.lastSeq, bytes, s.now)
	} else {
		acts, err = s.a.OnBarrier(j, b.barrier, b.lastSeq, overtook, s.now)
	}
	if err != nil {
		s.fatalf("OnBarrier(in=%d, id=%d, last=%d, overtook=%v): %v", j, b.barrier, b.lastSeq, overtook, err)
	}
	c := s.ck(b.barrier)
	c.hasBarrier[j] = true
	c.lastSeq[j] = b.lastSeq
	s.curInput, s.curID, s.curCopies = j, b.barrier, copies
	before, wasSwitched := c.captures, c.switched
	s.apply(acts)
	s.curInput, s.curID, s.curCopies = -1, 0, nil
	if len(acts) > 0 {
		if _, ok := acts[0].(Ignored); ok {
			delete(s.cks, b.barrier)
			return true
		}
	}
	if s.requeued {
		// Fell back to alignment: the barrier comes again, in order.
		s.requeued = false
		c.hasBarrier[j] = false
		return true
	}
	// A barrier that meets a snapshot already taken (or triggers one, in
	// unaligned mode) selects its overtaken copies exactly once; one that
	// meets an aligning checkpoint in order selects none.
	want := 0
	aligningInOrder := !overtook && !wasSwitched && (s.cfg.Mode == Aligned || in.inOrder[b.barrier])
	if c.atSnapshot != nil && !aligningInOrder {
		want = 1
	}
	if got := c.captures - before; got != want {
		s.fatalf("barrier %d on input %d (overtook=%v): %d CaptureOvertaken, want %d: %v", b.barrier, j, overtook, got, want, acts)
	}
	return true
}

// fireTimer fires the first timer that is due, if any.
func (s *sim) fireTimer() bool {
	for i, tm := range s.timers {
		if tm.At <= s.now {
			s.timers = slices.Delete(s.timers, i, i+1)
			s.apply(s.a.OnTimeout(tm.ID, s.now))
			return true
		}
	}
	return false
}

// apply carries out the Aligner's actions as a task actor would.
func (s *sim) apply(acts []Action) {
	s.t.Helper()
	for _, act := range acts {
		switch act := act.(type) {
		case Snapshot:
			c := s.ck(act.ID)
			if c.atSnapshot != nil {
				s.fatalf("second snapshot of %d", act.ID)
			}
			c.atSnapshot = slices.Clone(s.processed)
		case ForwardBarrier:
			c := s.ck(act.ID)
			if c.atSnapshot == nil {
				s.fatalf("barrier %d forwarded before the snapshot", act.ID)
			}
			c.forwards++
		case CaptureOvertaken:
			if act.ID != s.curID || act.Input != s.curInput {
				s.fatalf("%v while delivering barrier %d on input %d", act, s.curID, s.curInput)
			}
			c := s.ck(act.ID)
			c.captures++
			for _, seq := range s.curCopies {
				if seq > act.AfterSeq {
					c.state[act.Input] = append(c.state[act.Input], seq)
				}
			}
		case Unblock:
			for _, j := range act.Inputs {
				s.in[j].blocked = false
			}
		case SwitchToUnaligned:
			s.ck(act.ID).switched = true
			for _, j := range act.Inputs {
				s.in[j].overtake[act.ID] = true
			}
		case AlignInput:
			if act.ID != s.curID || act.Input != s.curInput {
				s.fatalf("%v while delivering barrier %d on input %d", act, s.curID, s.curInput)
			}
			in := s.in[act.Input]
			in.inOrder[act.ID] = true
			at := len(in.queue)
			for p, it := range in.queue {
				if (it.barrier == 0 && it.seq > act.LastSeq) || it.barrier > act.ID {
					at = p
					break
				}
			}
			in.queue = slices.Insert(in.queue, at, simItem{barrier: act.ID, lastSeq: act.LastSeq})
			s.requeued = true
			if s.passRequeued {
				// The channel had already sent the newer barriers queued
				// behind it overtaking: they reach the task first.
				for _, it := range in.queue[at+1:] {
					if it.barrier > act.ID && s.overtakes(act.Input, it.barrier) {
						in.passed[it.barrier] = true
					}
				}
			}
		case StartTimer:
			s.timers = append(s.timers, act)
		case Complete:
			s.checkComplete(act)
		case Aborted:
			delete(s.cks, act.ID)
			s.aborts = append(s.aborts, act.ID)
			// The task declines a checkpoint it dropped: the coordinator
			// ends it (a no-op if it aborted it itself).
			s.inflight = slices.DeleteFunc(s.inflight, func(x uint64) bool { return x == act.ID })
		case Ignored:
			s.ignored++
		default:
			s.fatalf("unknown action %T", act)
		}
	}
	s.checkBlocked()
}

// checkBlocked compares the channels' blocked flags with the Aligner's.
func (s *sim) checkBlocked() {
	for j, in := range s.in {
		if in.blocked != (s.a.blocked[j] != 0) {
			s.fatalf("input %d: channel blocked=%v, aligner blocked=%v", j, in.blocked, s.a.blocked[j])
		}
	}
}

// checkComplete asserts the capture invariant of a completed checkpoint.
func (s *sim) checkComplete(done Complete) {
	s.t.Helper()
	if n := len(s.completes); n > 0 && s.completes[n-1].ID >= done.ID {
		s.fatalf("completed %d after %d", done.ID, s.completes[n-1].ID)
	}
	s.completes = append(s.completes, done)
	s.inflight = slices.DeleteFunc(s.inflight, func(x uint64) bool { return x == done.ID })
	c := s.ck(done.ID)
	if c.atSnapshot == nil || c.forwards != 1 {
		s.fatalf("complete %d with snapshot=%v forwards=%d", done.ID, c.atSnapshot != nil, c.forwards)
	}
	for j := range s.cfg.Inputs {
		if !c.hasBarrier[j] {
			s.fatalf("complete %d without the barrier of input %d", done.ID, j)
		}
		from, to := c.atSnapshot[j], c.lastSeq[j]
		if from > to {
			s.fatalf("checkpoint %d input %d: processed %d at snapshot, after the barrier (last seq %d)", done.ID, j, from, to)
		}
		var want []uint64
		for seq := from + 1; seq <= to; seq++ {
			want = append(want, seq)
		}
		if !slices.Equal(c.state[j], want) {
			s.fatalf("checkpoint %d input %d: channel state %v, want (%d, %d] = %v", done.ID, j, c.state[j], from, to, want)
		}
		if !done.Unaligned && len(c.state[j]) > 0 {
			s.fatalf("aligned checkpoint %d has channel state on input %d: %v", done.ID, j, c.state[j])
		}
	}
	delete(s.cks, done.ID)
}

// idle says if nothing is queued, blocked or in progress anywhere.
func (s *sim) idle() bool {
	if _, ok := s.a.InProgress(); ok || len(s.inflight) > 0 || len(s.notices) > 0 {
		return false
	}
	for _, in := range s.in {
		if len(in.queue) > 0 || in.blocked || len(in.inject) > 0 {
			return false
		}
	}
	return true
}
