package state

import "sync"

// scratchKeep keeps an encoder's scratch from one of a backend's snapshots
// to the next. A scratch's buffers grow to the largest group a snapshot
// encodes; made afresh for every snapshot they were allocated anew each
// time, about twice that size per table, which with large state makes
// most of what a checkpoint allocates (and so of the collections that run
// while checkpoints are taken). It keeps one scratch: snapshots encoded at
// the same time take a new one each, and the first given back is kept.
type scratchKeep struct {
	mu   sync.Mutex
	kept *snapScratch
}

// take returns the kept scratch, or a new one when none is kept (or k is
// nil).
func (k *scratchKeep) take() *snapScratch {
	if k != nil {
		k.mu.Lock()
		defer k.mu.Unlock()
		if sc := k.kept; sc != nil {
			k.kept = nil
			return sc
		}
	}
	return &snapScratch{offTask: true}
}

// give keeps sc for the next snapshot unless one is kept already. Nothing
// may refer to sc's buffers any more.
func (k *scratchKeep) give(sc *snapScratch) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kept == nil {
		k.kept = sc
	}
}
