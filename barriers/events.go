package barriers

import (
	"fmt"
	"slices"
	"time"
)

// OnBarrier handles the barrier of checkpoint id arriving on input. lastSeq is
// the seq of the last buffer its producer sent before it; overtook says it
// came unaligned, ahead of data (with copies of the buffers it overtook). now
// is logical time. A new id supersedes (aborts) older checkpoints in progress
// whose barrier on input has not arrived, and with MaxConcurrent 1 any older
// one in progress; an id already completed, aborted or superseded (or older
// than one started) yields Ignored. In Aligned
// mode a channel blocks itself after every in-order barrier, so an in-order
// barrier that does not leave its input blocked (stale, or arriving after a
// timeout switch) comes with an Unblock of that input; channels must treat
// Unblock as idempotent. Protocol violations return an error wrapping
// ErrProtocol and change nothing.
func (a *Aligner) OnBarrier(input int, id uint64, lastSeq uint64, overtook bool, now time.Duration) ([]Action, error) {
	return a.onBarrier(input, id, lastSeq, overtook, false, 0, now)
}

// OnBarrierBytes is OnBarrier for an overtaking barrier whose overtaken data
// not yet processed (the copies with seq above what input processed) is
// bytes long: with MaxInflightBytes set, more than that makes the checkpoint
// fall back to alignment on input (AlignInput) if its snapshot is not taken
// yet.
func (a *Aligner) OnBarrierBytes(input int, id uint64, lastSeq uint64, bytes int64, now time.Duration) ([]Action, error) {
	return a.onBarrier(input, id, lastSeq, true, false, bytes, now)
}

// OnFinalBarrier handles an in-order barrier of the final checkpoint (the end
// of input). A final checkpoint always aligns, in every mode: no timer is
// started for it and nothing switches it to unaligned, so the snapshot comes
// after every record before the barriers and no data is left in flight. Every
// barrier of one checkpoint must agree on being final; an overtaking barrier
// of a final checkpoint is a protocol violation.
func (a *Aligner) OnFinalBarrier(input int, id uint64, lastSeq uint64, now time.Duration) ([]Action, error) {
	return a.onBarrier(input, id, lastSeq, false, true, 0, now)
}

func (a *Aligner) onBarrier(input int, id uint64, lastSeq uint64, overtook, final bool, bytes int64, now time.Duration) ([]Action, error) {
	if uint(input) >= uint(len(a.processed)) {
		return nil, fmt.Errorf("barrier %d: %w", id, a.badInput(input))
	}
	if b := a.blocked[input]; b != 0 {
		return nil, fmt.Errorf("barrier %d on input %d blocked at barrier %d: %w", id, input, b, ErrProtocol)
	}
	ck := a.find(id)
	if ck == nil && (id <= a.seen || slices.Contains(a.aborted, id)) {
		acts := []Action{Ignored{ID: id, Input: input}}
		if (a.cfg.Mode == Aligned || final || a.cfg.MaxInflightBytes > 0) && !overtook {
			// An aligned channel (or one a barrier fell back to alignment
			// on) blocks itself after any in-order barrier, stale or not;
			// let it go on.
			acts = append(acts, Unblock{ID: id, Inputs: []int{input}})
		}
		return acts, nil
	}
	if ck != nil && ck.arrived[input] {
		return nil, fmt.Errorf("barrier %d on input %d twice: %w", id, input, ErrProtocol)
	}
	if overtook && (final || (ck != nil && ck.final)) {
		return nil, fmt.Errorf("barrier %d on input %d overtook data, but final checkpoints align: %w", id, input, ErrProtocol)
	}
	if ck != nil && ck.final != final {
		return nil, fmt.Errorf("barrier %d on input %d final=%v, but its checkpoint has final=%v: %w",
			id, input, final, ck.final, ErrProtocol)
	}
	// The phase this barrier meets: its checkpoint's, or that of a new one.
	var ph phase
	switch {
	case ck != nil:
		ph = ck.phase
	case a.cfg.Mode == Aligned || final:
		ph = aligning
	default:
		ph = capturing
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
	isNew := ck == nil
	if overtook && (isNew || ck.phase == aligning) && a.fallsBack(ck, bytes) {
		return a.alignInput(ck, input, id, lastSeq, bytes, now), nil
	}
	if isNew {
		acts = a.supersede(acts, input, id)
		ck = a.start(id, now, final && !switchNow)
		if ck.phase == capturing {
			acts = append(acts, Snapshot{ID: id}, ForwardBarrier{ID: id, Unaligned: true})
		}
	}
	if switchNow {
		acts = append(acts, a.OnTimeout(id, now)...)
	}
	ck.arrived[input] = true
	ck.nArrived++
	a.release(input, id) // it came again: the input's data after it may go on
	if ck.phase == capturing {
		acts = append(acts, CaptureOvertaken{ID: id, Input: input, AfterSeq: a.processed[input]})
		if (a.cfg.Mode == Aligned || a.cfg.MaxInflightBytes > 0) && !overtook {
			// Delivered in order after a timeout switch (the switch came too
			// late for this channel, which blocked itself): release it.
			acts = append(acts, Unblock{ID: id, Inputs: []int{input}})
		}
	} else {
		a.blocked[input] = id
	}
	if ck.mustAlign[input] {
		ck.nMust--
	}

	if ck.nArrived == len(ck.arrived) {
		return a.complete(acts, ck, now), nil
	}
	if ck.heldBack && ck.nMust == 0 && ck.phase == aligning {
		// The inputs whose data was too large are aligned: snapshot now.
		acts = append(acts, a.switchToUnaligned(ck, "inputs over the in-flight limit aligned")...)
	}
	if isNew && ck.phase == aligning && a.cfg.AlignedTimeout > 0 && !ck.final {
		acts = append(acts, StartTimer{ID: id, At: now + a.cfg.AlignedTimeout})
	}
	return acts, nil
}

// supersede aborts, before checkpoint id starts with its barrier on input,
// the older checkpoints in progress that can no longer complete (their
// barrier on input has not arrived, and barriers arrive on an input in id
// order) and, with MaxConcurrent 1, every older one: the coordinator has one
// checkpoint in flight, so starting id means it ended the others. With more,
// the task cannot tell which older ones the coordinator ended (their abort
// may still be on its way), so they go on until they complete, are aborted
// or can no longer complete; the coordinator bounds how many are in flight.
func (a *Aligner) supersede(acts []Action, input int, id uint64) []Action {
	for _, ck := range slices.Clone(a.cks) {
		if ck.id < id && (!ck.arrived[input] || a.cfg.MaxConcurrent == 1) {
			acts = a.abort(acts, ck)
		}
	}
	return acts
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

// complete finishes checkpoint ck once every barrier is in.
func (a *Aligner) complete(acts []Action, ck *inProgress, now time.Duration) []Action {
	id := ck.id
	unaligned := ck.phase == capturing
	if !unaligned {
		all := make([]int, len(ck.arrived))
		for i := range all {
			all[i] = i
		}
		acts = append(acts,
			Snapshot{ID: id},
			ForwardBarrier{ID: id, Unaligned: false, Final: ck.final},
			Unblock{ID: id, Inputs: all})
	}
	acts = append(acts, Complete{ID: id, AlignmentDuration: now - ck.firstAt, Unaligned: unaligned})
	a.finish(ck)
	return acts
}

// OnTimeout handles a StartTimer that fired. If checkpoint id is still
// aligning it switches to unaligned: snapshot now, forward the barrier
// overtaking, release the blocked inputs (their channel state is empty) and
// ask the others to deliver their barrier overtaking. For a finished, switched
// or unknown id, and for a final checkpoint, it returns no actions.
//
// While inputs that fell back to alignment (AlignInput) have not aligned, the
// timeout does not switch: the checkpoint switches once they have.
func (a *Aligner) OnTimeout(id uint64, now time.Duration) []Action {
	ck := a.find(id)
	if ck == nil || ck.phase != aligning || ck.final || ck.nMust > 0 {
		return nil
	}
	return a.switchToUnaligned(ck, "")
}

// switchToUnaligned switches aligning checkpoint ck to unaligned for reason
// (empty for a timeout or an upstream switch).
func (a *Aligner) switchToUnaligned(ck *inProgress, reason string) []Action {
	id := ck.id
	ck.phase = capturing
	acts := []Action{Snapshot{ID: id}, ForwardBarrier{ID: id, Unaligned: true}}
	if in := a.blockedBy(id); len(in) > 0 {
		acts = append(acts, Unblock{ID: id, Inputs: in})
		a.unblock(id)
	}
	return append(acts, SwitchToUnaligned{ID: id, Inputs: ck.missingInputs(), Reason: reason})
}

// Abort handles the coordinator aborting checkpoint id: if it is in progress
// the task drops what it captured for it and the inputs it blocked resume;
// its barriers that arrive later are ignored. With MaxConcurrent 1 an abort
// of id also ends older checkpoints in progress (the coordinator has one in
// flight, so it ended them); with more, the others go on.
func (a *Aligner) Abort(id uint64) []Action {
	var acts []Action
	for _, ck := range slices.Clone(a.cks) {
		if ck.id == id || (a.cfg.MaxConcurrent == 1 && ck.id < id) {
			acts = a.abort(acts, ck)
		}
	}
	switch {
	case a.cfg.MaxConcurrent == 1:
		a.seen = max(a.seen, id)
	case id > a.seen && !slices.Contains(a.aborted, id):
		// Not started here yet; older ones in flight may still start.
		a.aborted = append(a.aborted, id)
	}
	return acts
}
