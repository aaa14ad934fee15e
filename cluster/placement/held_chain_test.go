package placement

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/store"
)

// heldWrite is one checkpoint's blob of task count[0] that a node wrote:
// its key groups, each of size bytes, as deltas on the node's chains of the
// previous write (delta) or whole. Local says whether the node's local copy
// kept it (false: only the shared store has it).
type heldWrite struct {
	ckpt   uint64
	groups []int
	size   int
	delta  bool
	local  bool
}

// nodeHolding writes a node's checkpoints through a real Mirror (a local
// directory store as the shared one, another as the node's copy) and
// returns the heartbeat its inventory gives, as the node agent reports it.
func nodeHolding(t *testing.T, node string, writes []heldWrite) cluster.Heartbeat {
	t.Helper()
	ctx := context.Background()
	primary, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &store.Mirror{Primary: primary, Local: local, Log: zerolog.Nop()}
	chains := map[int][]store.ChainLink{}
	for _, w := range writes {
		var data []byte
		for _, g := range w.groups {
			part := bytes.Repeat([]byte{byte(g)}, w.size)
			copy(part, fmt.Sprintf("kg %d ckpt %d", g, w.ckpt))
			data = append(data, part...)
		}
		var put func(context.Context, string, uint64, string, []byte) (store.BlobRef, error) = primary.PutBlob
		if w.local {
			put = m.PutBlob
		}
		whole, err := put(ctx, "j", w.ckpt, "count/0/state", data)
		if err != nil {
			t.Fatal(err)
		}
		ts := store.TaskSnapshot{Operator: "count", KeyGroups: map[int]store.BlobRef{}, KeyGroupChains: map[int][]store.ChainLink{}, SourceOffset: -1}
		for i, g := range w.groups {
			off := int64(i * w.size)
			link := store.ChainLink{Checkpoint: w.ckpt, Ref: store.Section(whole, off, data[off:off+int64(w.size)])}
			if !w.delta {
				chains[g] = []store.ChainLink{link}
				ts.KeyGroups[g] = link.Ref
				continue
			}
			chains[g] = append(chains[g], link)
			ts.KeyGroupChains[g] = append([]store.ChainLink(nil), chains[g]...)
		}
		if w.local {
			if err := m.RecordSnapshot(ctx, "j", w.ckpt, ts); err != nil {
				t.Fatal(err)
			}
		}
	}
	hs, err := m.Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hb := cluster.Heartbeat{Node: node, Slots: 4}
	for _, h := range hs {
		var kg [][2]int
		for _, r := range h.KeyGroups {
			kg = append(kg, [2]int{r.Start, r.End})
		}
		hb.Held = append(hb.Held, cluster.HeldState{Job: h.Job, Operator: h.Operator, Checkpoint: h.Checkpoint, KeyGroups: kg,
			KeyGroupBytes: h.KeyGroupBytes, Bytes: h.Bytes})
	}
	return hb
}

// TestPlacementScoresWholeChains: with incremental checkpoints a node holds
// a key group as a whole section and the deltas on it, written by several
// checkpoints; placement at the newest checkpoint scores the bytes of the
// whole chain the node holds, not the delta that checkpoint wrote. Two
// nodes each ran one instance of count at parallelism 2 (key groups 0-3 and
// 4-7 of 8); the job restores at parallelism 1, and its one instance goes
// to the node holding more of its state.
func TestPlacementScoresWholeChains(t *testing.T) {
	tb, err := keygroups.Contiguous(8, 1)
	if err != nil {
		t.Fatal(err)
	}
	job := &plan.Job{Name: "j", MaxParallelism: 8, Operators: []*plan.Operator{
		{ID: 0, Name: "src", Parallelism: 1},
		{ID: 1, Name: "count", Parallelism: 1, Keyed: true, Table: tb},
	}}
	low, high := []int{0, 1, 2, 3}, []int{4, 5, 6, 7}
	count := task.ID{Operator: "count", OperatorID: 1, Instance: 0}
	for _, tc := range []struct {
		name             string
		n1, n2           []heldWrite
		n1Bytes, n2Bytes int64 // the nodes' scores for count[0] at the newest checkpoint
		want             string
	}{
		{
			name: "a chain's whole section counts: 100-byte groups and 10-byte deltas beat 50-byte whole groups",
			n1:   []heldWrite{{ckpt: 1, groups: low, size: 100, local: true}, {ckpt: 2, groups: low, size: 10, delta: true, local: true}},
			n2:   []heldWrite{{ckpt: 2, groups: high, size: 50, local: true}},
			// 4 × (100 + 10) against 4 × 50.
			n1Bytes: 440, n2Bytes: 200, want: "n1",
		},
		{
			name:    "a chain whose whole section the node no longer holds counts for nothing",
			n1:      []heldWrite{{ckpt: 1, groups: low, size: 100}, {ckpt: 2, groups: low, size: 10, delta: true, local: true}},
			n2:      []heldWrite{{ckpt: 2, groups: high, size: 50, local: true}},
			n1Bytes: 0, n2Bytes: 200, want: "n2",
		},
		{
			name: "two chains: the longer state wins, not the larger last delta",
			n1: []heldWrite{{ckpt: 1, groups: low, size: 300, local: true}, {ckpt: 2, groups: low, size: 5, delta: true, local: true},
				{ckpt: 3, groups: low, size: 5, delta: true, local: true}},
			n2: []heldWrite{{ckpt: 1, groups: high, size: 100, local: true}, {ckpt: 2, groups: high, size: 20, delta: true, local: true},
				{ckpt: 3, groups: high, size: 20, delta: true, local: true}},
			n1Bytes: 4 * 310, n2Bytes: 4 * 140, want: "n1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []cluster.Heartbeat{nodeHolding(t, "n1", tc.n1), nodeHolding(t, "n2", tc.n2)}
			newest := tc.n1[len(tc.n1)-1].ckpt
			local := LocalFromHeld(job, newest, nodes)
			scores := map[string]int64{}
			for _, c := range local[count] {
				scores[c.Node] = c.Bytes
			}
			if scores["n1"] != tc.n1Bytes || scores["n2"] != tc.n2Bytes {
				t.Fatalf("count[0]'s local bytes at checkpoint %d: n1 %d, n2 %d; want %d and %d (holdings %+v / %+v)",
					newest, scores["n1"], scores["n2"], tc.n1Bytes, tc.n2Bytes, nodes[0].Held, nodes[1].Held)
			}
			got, err := PlaceJob("j", job, nodes, local)
			if err != nil {
				t.Fatal(err)
			}
			if got[count] != tc.want {
				t.Fatalf("count[0] placed on %s, want %s (scores %v)", got[count], tc.want, scores)
			}
		})
	}
}
