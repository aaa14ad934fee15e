package actors

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/store"
)

// TestCompactionAfterAFillSpreadOverCheckpoints runs a real state backend
// through the task's chain bookkeeping (deltaChooser, extendChain): 64 key
// groups are filled over four checkpoints (the first writes them whole,
// the next three add a quarter of the keys each, as deltas), then every
// checkpoint changes 1 % of the keys. The fill's deltas overwrite nothing,
// so no group may be written whole again before its chain holds 32 deltas,
// and no checkpoint of the 1 % phase may write more than 5 % of the state.
// Judged by the deltas' bytes against the first, small whole section, every
// chain would be overdue at once and the fifth checkpoint would rewrite
// the whole state.
func TestCompactionAfterAFillSpreadOverCheckpoints(t *testing.T) {
	const groups, perGroup, fillCkpts, maxDeltas = 64, 400, 4, 32
	b := state.NewBackend(groups)
	values := state.NewValueTable[[]byte]("v", groups)
	if _, err := b.Register(values); err != nil {
		t.Fatal(err)
	}
	b.TrackChanges()
	key := func(g, i int) string { return fmt.Sprintf("g%02d-k%04d", g, i) }
	value := func(i, version int) []byte { return []byte(fmt.Sprintf("%032d", i*1000+version)) }
	all := make([]int, groups)
	for g := range groups {
		all[g] = g
	}
	var view chainView
	checkpoint := func(id uint64) (written int64, compacted []int) {
		t.Helper()
		snap, err := b.SnapshotAsyncAt(id, all)
		if err != nil {
			t.Fatal(err)
		}
		blobs, deltas, err := snap.EncodeIncremental(view.deltaChooser(maxDeltas, 0.5))
		if err != nil {
			t.Fatalf("checkpoint %d: %v", id, err)
		}
		next := chainView{at: id, groups: map[int]*groupChain{}}
		for _, g := range all {
			written += int64(len(blobs[g]))
			base := view.groups[g]
			if base != nil && !deltas[g] {
				if n := len(base.links) - 1; n < maxDeltas {
					t.Fatalf("checkpoint %d wrote key group %d whole again after %d deltas (chain of %d entries, %d live keys, %d bytes of deltas on %d whole)",
						id, g, n, base.entries, base.live, base.deltaBytes, base.wholeBytes)
				}
				compacted = append(compacted, g)
			}
			entries, live, ok := snap.Entries(g)
			if !ok {
				t.Fatalf("checkpoint %d key group %d: no entry counts", id, g)
			}
			ref := store.BlobRef{Size: int64(len(blobs[g]))}
			next.groups[g] = extendChain(base, store.ChainLink{Checkpoint: id, Ref: ref}, deltas[g], plan.GroupEntries{Written: entries, Live: live}, true)
		}
		view = next
		b.Confirm(id)
		return written, compacted
	}

	id := uint64(0)
	for part := range fillCkpts {
		for g := range groups {
			for i := part * perGroup / fillCkpts; i < (part+1)*perGroup/fillCkpts; i++ {
				values.Put(g, key(g, i), value(i, 0))
			}
		}
		id++
		if _, compacted := checkpoint(id); len(compacted) > 0 {
			t.Fatalf("fill checkpoint %d wrote groups %v whole again", id, compacted)
		}
	}
	var full int64
	for g := range groups {
		blob, err := b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		full += int64(len(blob))
	}
	compactions := 0
	for round := 1; round <= 2*maxDeltas; round++ {
		for g := range groups {
			for i := round % 100; i < perGroup; i += 100 { // 1 % of the keys
				values.Put(g, key(g, i), value(i, round))
			}
		}
		id++
		written, compacted := checkpoint(id)
		compactions += len(compacted)
		if share := float64(written) / float64(full); share > 0.05 {
			t.Fatalf("checkpoint %d (1 %% changing) wrote %d bytes, %.1f %% of the state's %d", id, written, 100*share, full)
		}
	}
	// The chains came due by length and were compacted, spread out.
	if compactions < groups {
		t.Fatalf("%d compactions in %d checkpoints of 1 %% changing, want every one of %d groups compacted once", compactions, 2*maxDeltas, groups)
	}
}
