package barriers

import (
	"fmt"
	"time"
)

// OnBarrier handles the barrier of checkpoint id arriving on input. lastSeq is
// the seq of the last buffer its producer sent before it; overtook says it
// came unaligned, ahead of data (with copies of the buffers it overtook). now
// is logical time. A newer id supersedes (aborts) the checkpoint in progress;
// an id already completed, aborted or superseded yields Ignored. In Aligned
// mode a channel blocks itself after every in-order barrier, so an in-order
// barrier that does not leave its input blocked (stale, or arriving after a
// timeout switch) comes with an Unblock of that input; channels must treat
// Unblock as idempotent. Protocol violations return an error wrapping
// ErrProtocol and change nothing.
func (a *Aligner) OnBarrier(input int, id uint64, lastSeq uint64, overtook bool, now time.Duration) ([]Action, error) {
	return a.onBarrier(input, id, lastSeq, overtook, false, now)
}

// OnFinalBarrier handles an in-order barrier of the final checkpoint (the end
// of input). A final checkpoint always aligns, in every mode: no timer is
// started for it and nothing switches it to unaligned, so the snapshot comes
// after every record before the barriers and no data is left in flight. Every
// barrier of one checkpoint must agree on being final; an overtaking barrier
// of a final checkpoint is a protocol violation.
func (a *Aligner) OnFinalBarrier(input int, id uint64, lastSeq uint64, now time.Duration) ([]Action, error) {
	return a.onBarrier(input, id, lastSeq, false, true, now)
}

func (a *Aligner) onBarrier(input int, id uint64, lastSeq uint64, overtook, final bool, now time.Duration) ([]Action, error) {
	if uint(input) >= uint(len(a.processed)) {
		return nil, fmt.Errorf("barrier %d: %w", id, a.badInput(input))
	}
	if a.blocked[input] {
		return nil, fmt.Errorf("barrier %d on input %d blocked at barrier %d: %w", id, input, a.id, ErrProtocol)
	}
	if id <= a.lastDone || (a.phase != idle && id < a.id) {
		acts := []Action{Ignored{ID: id, Input: input}}
		if (a.cfg.Mode == Aligned || final) && !overtook {
			// An aligned channel blocks itself after any in-order barrier,
			// stale or not; let it go on.
			acts = append(acts, Unblock{ID: id, Inputs: []int{input}})
		}
		return acts, nil
	}
	same := a.phase != idle && id == a.id
	if same && a.arrived[input] {
		return nil, fmt.Errorf("barrier %d on input %d twice: %w", id, input, ErrProtocol)
	}
	if overtook && (final || (same && a.final)) {
		return nil, fmt.Errorf("barrier %d on input %d overtook data, but final checkpoints align: %w", id, input, ErrProtocol)
	}
	if same && a.final != final {
		return nil, fmt.Errorf("barrier %d on input %d final=%v, but its checkpoint has final=%v: %w",
			id, input, final, a.final, ErrProtocol)
	}
	// The phase this barrier meets: the current one, or that of a new checkpoint.
	ph := a.phase
	if !same {
		ph = capturing
		if a.cfg.Mode == Aligned || final {
			ph = aligning
		}
	}
	// An overtaking barrier met while aligning means an upstream task switched
	// this checkpoint to unaligned (its alignment timed out): switch here too.
	switchNow := overtook && ph == aligning
	if switchNow {
		ph = capturing
	}
	if err := a.checkSeqs(input, id, lastSeq, overtook, ph); err != nil {
		return nil, err
	}
	var acts []Action
	if switchNow {
		if !same {
			if a.phase != idle {
				acts = a.abortCurrent(acts) // superseded by id
			}
			a.start(id, now, false)
			same = true
		}
		acts = append(acts, a.OnTimeout(id, now)...)
	}

	if !same {
		if a.phase != idle {
			acts = a.abortCurrent(acts) // superseded by id
		}
		a.start(id, now, final)
		if a.phase == capturing {
			acts = append(acts, Snapshot{ID: id}, ForwardBarrier{ID: id, Unaligned: true})
		}
	}
	a.arrived[input] = true
	a.nArrived++
	if a.phase == capturing {
		acts = append(acts, CaptureOvertaken{ID: id, Input: input, AfterSeq: a.processed[input]})
		if a.cfg.Mode == Aligned && !overtook {
			// Delivered in order after a timeout switch (the switch came too
			// late for this channel, which blocked itself): release it.
			acts = append(acts, Unblock{ID: id, Inputs: []int{input}})
		}
	} else {
		a.blocked[input] = true
	}

	if a.nArrived == len(a.arrived) {
		return a.complete(acts, now), nil
	}
	if !same && a.phase == aligning && a.cfg.AlignedTimeout > 0 && !a.final {
		acts = append(acts, StartTimer{ID: id, At: now + a.cfg.AlignedTimeout})
	}
	return acts, nil
}

// checkSeqs validates a barrier's lastSeq against what input has processed.
func (a *Aligner) checkSeqs(input int, id, lastSeq uint64, overtook bool, ph phase) error {
	done := a.processed[input]
	switch {
	case overtook && ph == aligning:
		return fmt.Errorf("barrier %d on input %d overtook data while aligning: %w", id, input, ErrProtocol)
	case overtook && done > lastSeq:
		return fmt.Errorf("barrier %d on input %d with last seq %d overtook, but %d was processed: %w",
			id, input, lastSeq, done, ErrProtocol)
	case !overtook && done != lastSeq:
		return fmt.Errorf("barrier %d on input %d in order with last seq %d, but %d was processed: %w",
			id, input, lastSeq, done, ErrProtocol)
	}
	return nil
}

// complete finishes the checkpoint in progress once every barrier is in.
func (a *Aligner) complete(acts []Action, now time.Duration) []Action {
	id := a.id
	unaligned := a.phase == capturing
	if !unaligned {
		all := make([]int, len(a.arrived))
		for i := range all {
			all[i] = i
		}
		acts = append(acts,
			Snapshot{ID: id},
			ForwardBarrier{ID: id, Unaligned: false, Final: a.final},
			Unblock{ID: id, Inputs: all})
	}
	acts = append(acts, Complete{ID: id, AlignmentDuration: now - a.firstAt, Unaligned: unaligned})
	a.finish()
	return acts
}

// OnTimeout handles a StartTimer that fired. If checkpoint id is still
// aligning it switches to unaligned: snapshot now, forward the barrier
// overtaking, release the blocked inputs (their channel state is empty) and
// ask the others to deliver their barrier overtaking. For a finished, switched
// or unknown id, and for a final checkpoint, it returns no actions.
func (a *Aligner) OnTimeout(id uint64, now time.Duration) []Action {
	if a.phase != aligning || id != a.id || a.final {
		return nil
	}
	a.phase = capturing
	acts := []Action{Snapshot{ID: id}, ForwardBarrier{ID: id, Unaligned: true}}
	if in := a.blockedInputs(); len(in) > 0 {
		acts = append(acts, Unblock{ID: id, Inputs: in})
		clear(a.blocked)
	}
	return append(acts, SwitchToUnaligned{ID: id, Inputs: a.missingInputs()})
}

// Abort handles the coordinator aborting checkpoint id. If id is the one in
// progress (or newer, which implies it) the task drops what it captured and
// blocked inputs resume. Barriers of id that arrive later are ignored.
func (a *Aligner) Abort(id uint64) []Action {
	var acts []Action
	if a.phase != idle && id >= a.id {
		acts = a.abortCurrent(nil)
	}
	a.lastDone = max(a.lastDone, id)
	return acts
}
