package barriers

import (
	"fmt"
	"time"
)

// OnBlockedBytes records that bytes of data are queued behind the barrier at
// blocked input. With MaxInflightBytes set, once the data held back at the
// inputs an aligning checkpoint blocked exceeds it, the checkpoint switches
// to unaligned (SwitchToUnaligned with the reason), unless inputs that fell
// back to alignment are still aligning. A report for an input that is not
// blocked is stale and ignored.
func (a *Aligner) OnBlockedBytes(input int, bytes int64, now time.Duration) []Action {
	if uint(input) >= uint(len(a.blocked)) || a.blocked[input] == 0 {
		return nil
	}
	a.blockedBytes[input] = bytes
	limit := a.cfg.MaxInflightBytes
	ck := a.find(a.blocked[input])
	if limit <= 0 || ck == nil || ck.phase != aligning || ck.final || ck.nMust > 0 {
		return nil
	}
	var held int64
	for i, b := range a.blocked {
		if b == ck.id {
			held += a.blockedBytes[i]
		}
	}
	if held <= limit {
		return nil
	}
	return a.switchToUnaligned(ck, fmt.Sprintf("buffered %s > %s", byteText(held), byteText(limit)))
}

// fallsBack says an overtaking barrier of checkpoint ck (nil: not started)
// with bytes of overtaken data must fall back to alignment: its data exceeds
// MaxInflightBytes, or others of ck already fell back and its snapshot waits.
func (a *Aligner) fallsBack(ck *inProgress, bytes int64) bool {
	if a.cfg.MaxInflightBytes <= 0 || (ck != nil && ck.final) {
		return false
	}
	return bytes > a.cfg.MaxInflightBytes || (ck != nil && ck.heldBack)
}

// alignInput makes input fall back to alignment for checkpoint id (started
// here, aligning, if new): the barrier is to come again in order.
func (a *Aligner) alignInput(ck *inProgress, input int, id, lastSeq uint64, bytes int64, now time.Duration) []Action {
	var acts []Action
	isNew := ck == nil
	if isNew {
		acts = a.supersede(acts, input, id)
		ck = a.start(id, now, false)
		ck.phase = aligning // also in Unaligned mode: no snapshot before the inputs align
	}
	reason := "waits with the inputs over the limit"
	if bytes > a.cfg.MaxInflightBytes {
		reason = fmt.Sprintf("channel state %s > %s", byteText(bytes), byteText(a.cfg.MaxInflightBytes))
		if !ck.mustAlign[input] {
			ck.mustAlign[input] = true
			ck.nMust++
		}
		ck.heldBack = true
	}
	a.hold(input, id, lastSeq)
	acts = append(acts, AlignInput{ID: id, Input: input, LastSeq: lastSeq, Reason: reason})
	if isNew && a.cfg.AlignedTimeout > 0 {
		acts = append(acts, StartTimer{ID: id, At: now + a.cfg.AlignedTimeout})
	}
	return acts
}

// byteText renders a byte count for reasons in logs: 70.0 MB.
func byteText(b int64) string {
	const k = 1000
	switch {
	case b < k:
		return fmt.Sprintf("%d B", b)
	case b < k*k:
		return fmt.Sprintf("%.1f kB", float64(b)/k)
	case b < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(b)/(k*k))
	}
	return fmt.Sprintf("%.1f GB", float64(b)/(k*k*k))
}
