package actors

import (
	"fmt"
	"sync"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// Compaction defaults of incremental checkpoints: a key group is due to be
// written whole again after DefaultMaxDeltas deltas on its whole section, or
// once its deltas add up to more than DefaultCompactRatio of that section
// (chainsToCompact spreads the due groups over checkpoints).
const (
	DefaultMaxDeltas    = 32
	DefaultCompactRatio = 0.5
)

// groupChain is where one key group's state is in a completed checkpoint:
// a whole section and the deltas on it, with their sizes.
type groupChain struct {
	links      []store.ChainLink
	wholeBytes int64
	deltaBytes int64
}

// chainView is the task's key-group chains in the last checkpoint it was
// told completed (at), as a snapshot taken at a barrier sees them: deltas
// of that snapshot build on them. The map is never changed.
type chainView struct {
	at     uint64
	groups map[int]*groupChain
}

// taskChains keeps a task's key-group chains for incremental checkpoints:
// those of the last completed checkpoint (task-owned) and those each
// checkpoint in progress stored (written by the uploader, promoted when the
// checkpoint completes).
type taskChains struct {
	committed chainView
	mu        sync.Mutex
	pending   map[uint64]map[int]*groupChain
}

// startTracking makes an instance that checkpoints incrementally note its
// changed keys from now on, before it restores or processes anything.
func (t *task) startTracking() {
	co := t.job.opts.Checkpoint
	if in, ok := t.inst.(plan.Incremental); ok && co.Enabled() && co.Incremental && !co.SyncSnapshots {
		in.TrackChanges()
	}
}

// encodePending encodes the asynchronous snapshot of ck: with incremental
// checkpoints, the groups whose chain allows it as deltas on the chains of
// the checkpoint completed before the barrier. A snapshot that can append
// its groups to a buffer writes them into the task's spare (ck.laid).
func (t *task) encodePending(ck *taskCheckpoint) (plan.Snapshot, error) {
	co := t.job.opts.Checkpoint
	var useDelta func(g int) bool
	view := ck.chain
	if _, ok := ck.pending.(plan.IncrementalPending); ok && co.Incremental {
		maxDeltas, ratio := co.MaxDeltas, co.CompactRatio
		if maxDeltas == 0 {
			maxDeltas = DefaultMaxDeltas
		}
		if ratio == 0 {
			ratio = DefaultCompactRatio
		}
		compact := chainsToCompact(view.groups, maxDeltas, ratio)
		useDelta = func(g int) bool {
			return view.at != 0 && view.groups[g] != nil && !compact[g]
		}
	}
	var snap plan.Snapshot
	var err error
	switch p := ck.pending.(type) {
	case plan.AppendingPending:
		var laid []byte
		if laid, snap, err = p.EncodeAppend(t.blobs.takeAny(), useDelta); err != nil {
			t.blobs.give(laid)
		} else {
			ck.laid = laid
		}
	case plan.IncrementalPending:
		if useDelta == nil {
			return p.Encode()
		}
		snap, err = p.EncodeIncremental(useDelta)
	default:
		return ck.pending.Encode()
	}
	if err == nil && useDelta != nil && len(snap.Deltas) > 0 && snap.DeltaSince != view.at {
		return snap, fmt.Errorf("snapshot deltas build on checkpoint %d, the task's chains are of checkpoint %d", snap.DeltaSince, view.at)
	}
	return snap, err
}

// linkChains turns the key groups ts stores as deltas into chains on the
// groups' chains in ck's view, and records every group's chain for when
// checkpoint id completes. It runs on the uploader, before the
// acknowledgement is sent.
func (t *task) linkChains(id uint64, ck *taskCheckpoint, ts store.TaskSnapshot) store.TaskSnapshot {
	if !t.job.opts.Checkpoint.Incremental || len(ts.KeyGroups) == 0 {
		return ts
	}
	chains := make(map[int]*groupChain, len(ts.KeyGroups))
	for g, ref := range ts.KeyGroups {
		link := store.ChainLink{Checkpoint: id, Ref: ref}
		base := ck.chain.groups[g]
		if !ck.snap.Deltas[g] || base == nil {
			chains[g] = &groupChain{links: []store.ChainLink{link}, wholeBytes: ref.Size}
			continue
		}
		links := make([]store.ChainLink, len(base.links), len(base.links)+1)
		copy(links, base.links)
		c := &groupChain{links: append(links, link), wholeBytes: base.wholeBytes, deltaBytes: base.deltaBytes + ref.Size}
		chains[g] = c
		if ts.KeyGroupChains == nil {
			ts.KeyGroupChains = map[int][]store.ChainLink{}
		}
		ts.KeyGroupChains[g] = c.links
		delete(ts.KeyGroups, g)
	}
	t.chains.mu.Lock()
	if t.chains.pending == nil {
		t.chains.pending = map[uint64]map[int]*groupChain{}
	}
	t.chains.pending[id] = chains
	t.chains.mu.Unlock()
	return ts
}

// confirmChains makes the chains checkpoint id stored the ones later deltas
// build on, and tells the instance; none stored (the task's part had no key
// groups) means every group is written whole next.
func (t *task) confirmChains(id uint64) {
	in, ok := t.inst.(plan.Incremental)
	if !ok || !t.job.opts.Checkpoint.Incremental || id <= t.chains.committed.at {
		return
	}
	t.chains.mu.Lock()
	groups := t.chains.pending[id]
	for k := range t.chains.pending {
		if k <= id {
			delete(t.chains.pending, k)
		}
	}
	t.chains.mu.Unlock()
	t.chains.committed = chainView{at: id, groups: groups}
	in.ConfirmCheckpoint(id)
}
