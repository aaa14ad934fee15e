package barriers

import (
	"fmt"
	"slices"
	"time"
)

// phase is where a checkpoint in progress stands.
type phase uint8

const (
	// aligning: aligned checkpoint, no snapshot yet; arrived inputs are blocked.
	aligning phase = iota + 1
	// capturing: snapshot taken, waiting for the remaining barriers while
	// capturing the data of inputs whose barrier has not arrived.
	capturing
)

// Aligner is the barrier-alignment state machine of one task. It is not safe
// for concurrent use; the owning task actor calls it from one goroutine.
type Aligner struct {
	cfg       Config
	processed []uint64 // per input: seq of the last buffer handed to OnBuffer

	// cks are the checkpoints in progress, ascending ids (at most
	// cfg.MaxConcurrent). Barriers arrive on every input in increasing id
	// order, so they complete in that order too; at most one is aligning
	// (the newest), since an aligning one blocks its arrived inputs.
	cks  []*inProgress
	free []*inProgress // finished ones, reused

	// blocked is per input the checkpoint whose aligned barrier blocked it, 0
	// if none.
	blocked []uint64
	// blockedBytes is per blocked input the data queued behind its barrier,
	// as last reported by OnBlockedBytes.
	blockedBytes []int64

	// seen is the newest id started, completed or aborted here; a barrier at
	// or below it whose checkpoint is not in progress is stale.
	seen uint64
	// aborted are ids above seen the coordinator aborted before their first
	// barrier arrived here (MaxConcurrent > 1 only); dropped once seen passes
	// them.
	aborted []uint64

	// capturedBy lists the checkpoints OnBuffer last reported a capture for.
	capturedBy []uint64

	// held is per input the barrier that fell back to alignment there
	// (AlignInput) and has not come again: the input's data after its
	// lastSeq waits for it (Holds). Zero id: none.
	held []heldBarrier
}

// heldBarrier is a barrier sent back to in-order delivery on an input.
type heldBarrier struct {
	id, lastSeq uint64
}

// inProgress is one checkpoint a task is working on.
type inProgress struct {
	id       uint64
	phase    phase
	final    bool          // the end-of-input checkpoint: always aligned
	firstAt  time.Duration // logical time of its first barrier
	arrived  []bool        // per input: barrier id is in
	nArrived int
	// mustAlign marks the inputs that fell back to alignment because their
	// overtaken data exceeded MaxInflightBytes; nMust of them have not
	// aligned yet. heldBack: some did, so the snapshot waits for them and
	// every overtaking barrier met before it falls back too.
	mustAlign []bool
	nMust     int
	heldBack  bool
}

// NewAligner returns an Aligner for a task with cfg.Inputs inputs.
func NewAligner(cfg Config) (*Aligner, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new aligner: %w", err)
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 1
	}
	a := &Aligner{
		cfg:          cfg,
		processed:    make([]uint64, cfg.Inputs),
		blocked:      make([]uint64, cfg.Inputs),
		blockedBytes: make([]int64, cfg.Inputs),
		held:         make([]heldBarrier, cfg.Inputs),
	}
	copy(a.processed, cfg.ConsumedSeqs)
	a.cfg.ConsumedSeqs = nil // the caller keeps its slice
	return a, nil
}

// InProgress returns the id of the newest checkpoint this task is working
// on, if any.
func (a *Aligner) InProgress() (id uint64, ok bool) {
	if len(a.cks) == 0 {
		return 0, false
	}
	return a.cks[len(a.cks)-1].id, true
}

// InProgressIDs returns the ids of the checkpoints this task is working on,
// oldest first.
func (a *Aligner) InProgressIDs() []uint64 {
	ids := make([]uint64, len(a.cks))
	for i, ck := range a.cks {
		ids[i] = ck.id
	}
	return ids
}

// Awaits reports whether checkpoint id is in progress and waits for the
// barrier of input, and whether it is the final checkpoint.
func (a *Aligner) Awaits(id uint64, input int) (awaits, final bool) {
	ck := a.find(id)
	if ck == nil || uint(input) >= uint(len(ck.arrived)) || ck.arrived[input] {
		return false, false
	}
	return true, ck.final
}

// OnBuffer is called before the task processes buffer seq from input. It
// reports whether the buffer must be captured as channel state of a
// checkpoint in progress; CapturedBy then names which ones (with several in
// progress, one buffer can belong to the channel state of each). Seqs on an
// input must be consecutive, and a blocked input must not deliver; both are
// protocol errors. O(1) per checkpoint in progress, no allocation.
//
// A task that processes a buffer in parts calls OnBuffer once, before the
// first part: the buffer then counts as processed, so an overtaking barrier
// of that input does not capture it again. Its unprocessed rest at a
// Snapshot is channel state of that checkpoint, which the task captures
// itself, ahead of what the input delivers after it. (The input's barrier
// has not arrived then: an aligned one is handled only after the buffers
// before it are processed to the end.)
func (a *Aligner) OnBuffer(input int, seq uint64) (capture bool, err error) {
	if uint(input) >= uint(len(a.processed)) {
		return false, a.badInput(input)
	}
	if b := a.blocked[input]; b != 0 {
		return false, fmt.Errorf("buffer %d on input %d blocked at barrier %d: %w", seq, input, b, ErrProtocol)
	}
	if h := a.held[input]; h.id != 0 && seq > h.lastSeq {
		return false, fmt.Errorf("buffer %d on input %d after barrier %d (last seq %d) that fell back to alignment and has not come again: %w",
			seq, input, h.id, h.lastSeq, ErrProtocol)
	}
	if want := a.processed[input] + 1; seq != want {
		return false, fmt.Errorf("buffer %d on input %d, expected %d: %w", seq, input, want, ErrProtocol)
	}
	a.processed[input] = seq
	a.capturedBy = a.capturedBy[:0]
	for _, ck := range a.cks {
		if ck.phase == capturing && !ck.arrived[input] {
			a.capturedBy = append(a.capturedBy, ck.id)
		}
	}
	return len(a.capturedBy) > 0, nil
}

// Holds says the task must not take buffer seq from input now: the input is
// blocked at an aligned barrier, or a barrier that fell back to alignment
// there (AlignInput) has not come again and seq is after its lastSeq. The
// channel delivered that data already (the barrier had overtaken it); the
// task keeps it until the barrier arrives, in order or overtaking after a
// switch, and the input is not blocked, or until its checkpoint ends. A
// barrier of another checkpoint that unblocks the input (an older one sent
// back before and ignored now) does not release it.
func (a *Aligner) Holds(input int, seq uint64) bool {
	if uint(input) >= uint(len(a.held)) {
		return false
	}
	h := a.held[input]
	return a.blocked[input] != 0 || (h.id != 0 && seq > h.lastSeq)
}

// hold makes input keep its data after lastSeq until barrier id comes again.
func (a *Aligner) hold(input int, id, lastSeq uint64) {
	a.held[input] = heldBarrier{id: id, lastSeq: lastSeq}
}

// release ends the hold of input if it is for barrier id or an older one.
func (a *Aligner) release(input int, id uint64) {
	if h := a.held[input]; h.id != 0 && h.id <= id {
		a.held[input] = heldBarrier{}
	}
}

// CapturedBy lists, ascending, the checkpoints whose channel state the buffer
// of the last OnBuffer belongs to (empty if it reported no capture). The
// slice is the Aligner's and valid until the next call.
func (a *Aligner) CapturedBy() []uint64 { return a.capturedBy }

func (a *Aligner) badInput(input int) error {
	return fmt.Errorf("input %d of %d: %w", input, len(a.processed), ErrProtocol)
}

// find returns checkpoint id if it is in progress.
func (a *Aligner) find(id uint64) *inProgress {
	for _, ck := range a.cks {
		if ck.id == id {
			return ck
		}
	}
	return nil
}

// start begins checkpoint id at logical time now; a final one always aligns.
func (a *Aligner) start(id uint64, now time.Duration, final bool) *inProgress {
	var ck *inProgress
	if n := len(a.free); n > 0 {
		ck, a.free = a.free[n-1], a.free[:n-1]
		clear(ck.arrived)
		clear(ck.mustAlign)
	} else {
		ck = &inProgress{arrived: make([]bool, a.cfg.Inputs), mustAlign: make([]bool, a.cfg.Inputs)}
	}
	ck.id, ck.final, ck.firstAt, ck.nArrived = id, final, now, 0
	ck.nMust, ck.heldBack = 0, false
	ck.phase = aligning
	if a.cfg.Mode == Unaligned && !final {
		ck.phase = capturing
	}
	a.cks = append(a.cks, ck) // ids increase: barriers below seen are stale
	a.see(id)
	return ck
}

// see raises seen to id and forgets the aborted ids it passed.
func (a *Aligner) see(id uint64) {
	a.seen = max(a.seen, id)
	a.aborted = slices.DeleteFunc(a.aborted, func(x uint64) bool { return x <= a.seen })
}

// finish ends checkpoint ck (completed or aborted).
func (a *Aligner) finish(ck *inProgress) {
	a.see(ck.id)
	a.cks = slices.DeleteFunc(a.cks, func(c *inProgress) bool { return c == ck })
	a.unblock(ck.id)
	for i, h := range a.held {
		if h.id == ck.id {
			a.held[i] = heldBarrier{}
		}
	}
	a.free = append(a.free, ck)
}

// unblock forgets the inputs blocked by checkpoint id.
func (a *Aligner) unblock(id uint64) {
	for i, b := range a.blocked {
		if b == id {
			a.blocked[i], a.blockedBytes[i] = 0, 0
		}
	}
}

// blockedBy lists the inputs blocked by checkpoint id, ascending, nil if none.
func (a *Aligner) blockedBy(id uint64) []int {
	var in []int
	for i, b := range a.blocked {
		if b == id {
			in = append(in, i)
		}
	}
	return in
}

// missingInputs lists the inputs whose barrier of ck has not arrived, ascending.
func (ck *inProgress) missingInputs() []int {
	var in []int
	for i, ok := range ck.arrived {
		if !ok {
			in = append(in, i)
		}
	}
	return in
}

// abort drops checkpoint ck and releases the inputs it blocked.
func (a *Aligner) abort(acts []Action, ck *inProgress) []Action {
	acts = append(acts, Aborted{ID: ck.id})
	if in := a.blockedBy(ck.id); len(in) > 0 {
		acts = append(acts, Unblock{ID: ck.id, Inputs: in})
	}
	a.finish(ck)
	return acts
}

// Processed returns the seq of the last buffer of input handed to OnBuffer
// (0 for an unknown input): overtaken copies above it are not processed yet.
func (a *Aligner) Processed(input int) uint64 {
	if uint(input) >= uint(len(a.processed)) {
		return 0
	}
	return a.processed[input]
}
