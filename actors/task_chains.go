package actors

import (
	"fmt"
	"io"
	"sync"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// Compaction defaults of incremental checkpoints: a key group is due to be
// written whole again after DefaultMaxDeltas deltas on its whole section, or
// once the entries its deltas overwrote (or, not counted, the deltas' bytes)
// are more than DefaultCompactRatio of its live keys (of its whole
// section's bytes); chainsToCompact spreads the due groups over
// checkpoints.
const (
	DefaultMaxDeltas    = 32
	DefaultCompactRatio = 0.5
)

// groupChain is where one key group's state is in a completed checkpoint:
// a whole section and the deltas on it, with their sizes and, when every
// link's snapshot counted them (counted), the entries they hold and the
// group's keys at the last link's barrier.
type groupChain struct {
	links      []store.ChainLink
	wholeBytes int64
	deltaBytes int64
	entries    int64
	live       int64
	counted    bool
}

// growth returns how much of a chain a restore reads for nothing, as the
// fraction over/of: the entries of its sections beyond the group's live
// keys (keys a later delta overwrote or deleted) over those keys; when not
// counted, the bytes of its deltas over its whole section's. A delta that
// only adds keys (a fill spread over checkpoints) does not grow a chain.
func (c *groupChain) growth() (over, of float64) {
	if c.counted {
		return float64(max(c.entries-c.live, 0)), float64(c.live)
	}
	return float64(c.deltaBytes), float64(c.wholeBytes)
}

// chainView is the task's key-group chains in the last checkpoint it was
// told completed (at), as a snapshot taken at a barrier sees them: deltas
// of that snapshot build on them. The map is never changed.
type chainView struct {
	at     uint64
	groups map[int]*groupChain
}

// deltaChooser says which key groups a snapshot taken on this view may
// write as deltas: those with a chain, unless chainsToCompact picks it
// (maxDeltas and ratio 0: the defaults).
func (v chainView) deltaChooser(maxDeltas int, ratio float64) func(g int) bool {
	if maxDeltas == 0 {
		maxDeltas = DefaultMaxDeltas
	}
	if ratio == 0 {
		ratio = DefaultCompactRatio
	}
	compact := chainsToCompact(v.groups, maxDeltas, ratio)
	return func(g int) bool {
		return v.at != 0 && v.groups[g] != nil && !compact[g]
	}
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
// the checkpoint completed before the barrier. Given w, a snapshot that can
// stream writes its groups to w (ck.streamed); else one that can append
// its groups to a buffer writes them into the task's spare (ck.laid).
func (t *task) encodePending(ck *taskCheckpoint, w io.Writer) (plan.Snapshot, error) {
	co := t.job.opts.Checkpoint
	var useDelta func(g int) bool
	view := ck.chain
	if _, ok := ck.pending.(plan.IncrementalPending); ok && co.Incremental {
		useDelta = view.deltaChooser(co.MaxDeltas, co.CompactRatio)
	}
	var snap plan.Snapshot
	var err error
	sp, streaming := ck.pending.(plan.StreamingPending)
	switch p := ck.pending.(type) {
	case plan.AppendingPending:
		if streaming && w != nil {
			var buf []byte
			snap, ck.streamed, buf, err = sp.EncodeStream(w, t.streamBuf.takeAny(), useDelta)
			t.streamBuf.giveEmptied(buf)
			break
		}
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
		n, counted := ck.snap.Entries[g]
		c := extendChain(ck.chain.groups[g], store.ChainLink{Checkpoint: id, Ref: ref}, ck.snap.Deltas[g], n, counted)
		chains[g] = c
		if len(c.links) == 1 {
			continue
		}
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

// extendChain is a key group's chain once a checkpoint stored link for it:
// a delta on base, or a new chain of link alone when link is whole (or
// there is no base). n counts link's entries when counted.
func extendChain(base *groupChain, link store.ChainLink, delta bool, n plan.GroupEntries, counted bool) *groupChain {
	if !delta || base == nil {
		return &groupChain{links: []store.ChainLink{link}, wholeBytes: link.Ref.Size, entries: int64(n.Written), live: int64(n.Live), counted: counted}
	}
	links := make([]store.ChainLink, len(base.links), len(base.links)+1)
	copy(links, base.links)
	return &groupChain{links: append(links, link), wholeBytes: base.wholeBytes, deltaBytes: base.deltaBytes + link.Ref.Size,
		entries: base.entries + int64(n.Written), live: int64(n.Live), counted: counted && base.counted}
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
