package barriers

import (
	"fmt"
	"time"
)

// phase is where the checkpoint in progress stands.
type phase uint8

const (
	// idle: no checkpoint in progress.
	idle phase = iota
	// aligning: aligned checkpoint, no snapshot yet; arrived inputs are blocked.
	aligning
	// capturing: snapshot taken, waiting for the remaining barriers while
	// capturing the data of inputs whose barrier has not arrived.
	capturing
)

// Aligner is the barrier-alignment state machine of one task. It is not safe
// for concurrent use; the owning task actor calls it from one goroutine.
type Aligner struct {
	cfg       Config
	processed []uint64 // per input: seq of the last buffer handed to OnBuffer

	// The checkpoint in progress (phase != idle).
	phase    phase
	id       uint64
	final    bool          // the end-of-input checkpoint: always aligned
	firstAt  time.Duration // logical time of its first barrier
	arrived  []bool        // per input: barrier id is in
	blocked  []bool        // per input: channel blocked (aligning only)
	nArrived int

	// lastDone is the newest id completed or aborted here; barriers with an id
	// at or below it are stale.
	lastDone uint64
}

// NewAligner returns an Aligner for a task with cfg.Inputs inputs.
func NewAligner(cfg Config) (*Aligner, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new aligner: %w", err)
	}
	a := &Aligner{
		cfg:       cfg,
		processed: make([]uint64, cfg.Inputs),
		arrived:   make([]bool, cfg.Inputs),
		blocked:   make([]bool, cfg.Inputs),
	}
	copy(a.processed, cfg.ConsumedSeqs)
	a.cfg.ConsumedSeqs = nil // the caller keeps its slice
	return a, nil
}

// InProgress returns the id of the checkpoint this task is working on, if any.
func (a *Aligner) InProgress() (id uint64, ok bool) {
	if a.phase == idle {
		return 0, false
	}
	return a.id, true
}

// OnBuffer is called before the task processes buffer seq from input. It
// reports whether the buffer must be captured as channel state of the
// checkpoint in progress. Seqs on an input must be consecutive, and a blocked
// input must not deliver; both are protocol errors. O(1), no allocation.
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
	if a.blocked[input] {
		return false, fmt.Errorf("buffer %d on input %d blocked at barrier %d: %w", seq, input, a.id, ErrProtocol)
	}
	if want := a.processed[input] + 1; seq != want {
		return false, fmt.Errorf("buffer %d on input %d, expected %d: %w", seq, input, want, ErrProtocol)
	}
	a.processed[input] = seq
	return a.phase == capturing && !a.arrived[input], nil
}

func (a *Aligner) badInput(input int) error {
	return fmt.Errorf("input %d of %d: %w", input, len(a.processed), ErrProtocol)
}

// start begins checkpoint id at logical time now; a final one always aligns.
func (a *Aligner) start(id uint64, now time.Duration, final bool) {
	a.id = id
	a.final = final
	a.firstAt = now
	a.nArrived = 0
	clear(a.arrived)
	clear(a.blocked)
	if a.cfg.Mode == Unaligned && !final {
		a.phase = capturing
	} else {
		a.phase = aligning
	}
}

// finish ends the checkpoint in progress (completed or aborted).
func (a *Aligner) finish() {
	a.lastDone = a.id
	a.phase = idle
	a.final = false
	a.nArrived = 0
	clear(a.arrived)
	clear(a.blocked)
}

// blockedInputs lists the blocked inputs in ascending order, nil if none.
func (a *Aligner) blockedInputs() []int {
	var in []int
	for i, b := range a.blocked {
		if b {
			in = append(in, i)
		}
	}
	return in
}

// missingInputs lists the inputs whose barrier has not arrived, ascending.
func (a *Aligner) missingInputs() []int {
	var in []int
	for i, ok := range a.arrived {
		if !ok {
			in = append(in, i)
		}
	}
	return in
}

// abortCurrent drops the checkpoint in progress and releases blocked inputs.
func (a *Aligner) abortCurrent(acts []Action) []Action {
	acts = append(acts, Aborted{ID: a.id})
	if in := a.blockedInputs(); len(in) > 0 {
		acts = append(acts, Unblock{ID: a.id, Inputs: in})
	}
	a.finish()
	return acts
}
