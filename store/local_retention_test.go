package store

import (
	"errors"
	"reflect"
	"testing"

	"github.com/weirstream/weir/keygroups"
)

// TestPlanReconcile: what the local copy deletes given what the primary
// holds.
func TestPlanReconcile(t *testing.T) {
	type lc = LocalCheckpoint
	for _, tc := range []struct {
		name  string
		held  map[string][]uint64
		live  map[string][]uint64
		ended []string
		want  []lc
	}{
		{name: "nothing held", held: nil, live: map[string][]uint64{"a": {1}}, want: nil},
		{name: "all live kept", held: map[string][]uint64{"a": {3, 4}}, live: map[string][]uint64{"a": {3, 4}}, want: nil},
		{name: "subsumed deleted", held: map[string][]uint64{"a": {1, 2, 3}}, live: map[string][]uint64{"a": {3}}, want: []lc{{"a", 1}, {"a", 2}}},
		{name: "aborted between live ones deleted", held: map[string][]uint64{"a": {2, 3, 4}}, live: map[string][]uint64{"a": {2, 4}}, want: []lc{{"a", 3}}},
		{name: "newer than newest live kept", held: map[string][]uint64{"a": {3, 5}}, live: map[string][]uint64{"a": {3}}, want: nil},
		{name: "unknown job deleted", held: map[string][]uint64{"gone": {7, 8}}, live: map[string][]uint64{"a": {1}}, want: []lc{{"gone", 7}, {"gone", 8}}},
		{name: "job without checkpoints deleted", held: map[string][]uint64{"a": {1}}, live: map[string][]uint64{"a": {}}, want: []lc{{"a", 1}}},
		{name: "ended job deleted though live", held: map[string][]uint64{"a": {3, 4}, "b": {2}}, live: map[string][]uint64{"a": {3, 4}, "b": {2}}, ended: []string{"a"}, want: []lc{{"a", 3}, {"a", 4}}},
		{name: "several jobs sorted", held: map[string][]uint64{"b": {1, 9}, "a": {5, 1}}, live: map[string][]uint64{"a": {5}, "b": {9}}, want: []lc{{"a", 1}, {"b", 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ended := map[string]bool{}
			for _, j := range tc.ended {
				ended[j] = true
			}
			if got := planReconcile(tc.held, tc.live, ended); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("planReconcile = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMirrorReconcileDeletesExactly: with real files, Reconcile deletes the
// local state of an unknown job, an ended job and subsumed checkpoints,
// and keeps the primary's checkpoints and a newer one.
func TestMirrorReconcileDeletesExactly(t *testing.T) {
	m, primary, local, _ := newLoggedMirror(t)
	ctx := testCtx(t)
	commit := func(job string, ckpt uint64, ts taskState) {
		t.Helper()
		mf := &Manifest{Job: job, CheckpointID: ckpt, MaxParallelism: 128, Parallelism: map[string]int{"count": 1},
			Tasks: []TaskSnapshot{ts.snap}, Mode: "aligned"}
		if err := primary.Store.CommitManifest(ctx, mf); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []uint64{1, 2, 3, 4} {
		ts := putTaskState(t, m, "a", id, "count", 0, []int{0}, 16, 0)
		if id == 2 || id == 3 {
			commit("a", id, ts)
		}
	}
	putTaskState(t, m, "gone", 1, "count", 0, []int{0}, 16, 0)
	for _, id := range []uint64{5, 6} {
		commit("ended", id, putTaskState(t, m, "ended", id, "count", 0, []int{0}, 16, 0))
	}
	deleted, err := m.Reconcile(ctx, "ended")
	if err != nil {
		t.Fatal(err)
	}
	want := []LocalCheckpoint{{"a", 1}, {"ended", 5}, {"ended", 6}, {"gone", 1}}
	if !reflect.DeepEqual(deleted, want) {
		t.Fatalf("deleted %v, want %v", deleted, want)
	}
	jobs, _ := local.jobs()
	if !reflect.DeepEqual(jobs, []string{"a"}) {
		t.Fatalf("job directories left %v, want [a]", jobs)
	}
	ids, _ := local.checkpointIDs("a")
	if !reflect.DeepEqual(ids, []uint64{2, 3, 4}) {
		t.Fatalf("checkpoints of a left %v, want [2 3 4]", ids)
	}
	// The primary is untouched.
	if l, _ := primary.List(ctx, "ended"); !reflect.DeepEqual(l, []uint64{5, 6}) {
		t.Fatalf("primary's checkpoints of ended: %v", l)
	}
}

// TestMirrorDeleteRemovesLocalIndex: deleting a checkpoint deletes its
// local files and index.
func TestMirrorDeleteRemovesLocalIndex(t *testing.T) {
	m, _, local, _ := newLoggedMirror(t)
	ctx := testCtx(t)
	putTaskState(t, m, "j", 3, "count", 0, []int{0, 1}, 16, 1)
	if _, err := local.readIndex("j", 3); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, "j", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := local.readIndex("j", 3); err == nil {
		t.Fatal("index survived Delete")
	}
	if hs, err := m.Inventory(ctx); err != nil || len(hs) != 0 {
		t.Fatalf("inventory after delete: %v, %v", hs, err)
	}
}

// TestMirrorInventory: per job, operator and checkpoint, compact key-group
// ranges and bytes; a damaged index is logged and left out, and a section
// whose blob file is gone is not counted.
func TestMirrorInventory(t *testing.T) {
	m, _, local, logs := newLoggedMirror(t)
	ctx := testCtx(t)
	putTaskState(t, m, "j", 4, "count", 0, []int{0, 1, 2, 3}, 100, 2)
	putTaskState(t, m, "j", 4, "count", 1, []int{6, 7, 8}, 100, 0)
	putTaskState(t, m, "j", 4, "sum", 0, []int{5}, 10, 0)
	putTaskState(t, m, "j", 5, "count", 0, []int{0}, 100, 0)
	putTaskState(t, m, "k", 1, "count", 0, []int{9}, 50, 0)
	// Damage the index of j/5, remove the blob of k/1.
	p := local.indexPath("j", 5)
	flipFile(t, p, 20)
	if err := local.fs.RemoveAll(local.abs("k/" + checkpointDir(1) + "/count")); err != nil {
		t.Fatal(err)
	}
	hs, err := m.Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	chBytes := int64(len("channel 0 of count[0] buffers") + len("channel 1 of count[0] buffers"))
	want := []LocalHolding{
		{Job: "j", Operator: "count", Checkpoint: 4, KeyGroups: []keygroups.Range{{Start: 0, End: 3}, {Start: 6, End: 8}},
			KeyGroupBytes: 700, ChannelSections: 2, ChannelBytes: chBytes, Bytes: 700 + chBytes},
		{Job: "j", Operator: "sum", Checkpoint: 4, KeyGroups: []keygroups.Range{{Start: 5, End: 5}}, KeyGroupBytes: 10, Bytes: 10},
	}
	if !reflect.DeepEqual(hs, want) {
		t.Fatalf("inventory\n%+v\nwant\n%+v", hs, want)
	}
	if len(logs.Lines("local index damaged", `"checkpoint":5`)) != 1 {
		t.Fatalf("damaged index not logged:\n%s", logs)
	}
}

func TestCompactRanges(t *testing.T) {
	got := compactRanges([]int{9, 1, 2, 3, 3, 7, 8, 12})
	want := []keygroups.Range{{Start: 1, End: 3}, {Start: 7, End: 9}, {Start: 12, End: 12}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("compactRanges = %v, want %v", got, want)
	}
	if compactRanges(nil) != nil {
		t.Fatal("no groups, some ranges")
	}
}

// TestIndexNeverRecreatesADeletedCheckpoint: an index written after its
// checkpoint's local copy was deleted is not written, and the checkpoint's
// directory stays gone; recording a snapshot then is not an error.
func TestIndexNeverRecreatesADeletedCheckpoint(t *testing.T) {
	m, _, local, _ := newLoggedMirror(t)
	ctx := testCtx(t)
	ts := putTaskState(t, m, "j", 3, "count", 0, []int{0, 1}, 16, 0)
	if err := m.Delete(ctx, "j", 3); err != nil {
		t.Fatal(err)
	}
	x := &localIndex{Job: "j", Checkpoint: 3}
	x.merge(snapshotEntries(3, ts.snap))
	if err := local.writeIndex(x); !errors.Is(err, ErrNotFound) {
		t.Fatalf("writeIndex of a deleted checkpoint: %v, want ErrNotFound", err)
	}
	if err := m.RecordSnapshot(ctx, "j", 3, ts.snap); err != nil {
		t.Fatal(err)
	}
	if ids, _ := local.checkpointIDs("j"); len(ids) != 0 {
		t.Fatalf("checkpoint directories %v came back", ids)
	}
}

// TestMirrorInventoryCountsWholeChains: a key group of an incremental
// checkpoint counts the bytes of its whole chain (the whole section an
// earlier checkpoint wrote and the delta on it), not the delta alone, also
// as chain bytes, and counts only while every link of the chain is held.
func TestMirrorInventoryCountsWholeChains(t *testing.T) {
	m, _, local, _ := newLoggedMirror(t)
	ctx := testCtx(t)
	first := putTaskState(t, m, "j", 1, "count", 0, []int{0, 1}, 100, 0)
	// Checkpoint 2: deltas of 10 bytes on groups 0 and 1, group 5 whole.
	second := putTaskState(t, local, "j", 2, "count", 0, []int{0, 1, 5}, 10, 0)
	snap := second.snap
	snap.KeyGroupChains = map[int][]ChainLink{}
	for _, g := range []int{0, 1} {
		snap.KeyGroupChains[g] = []ChainLink{{Checkpoint: 1, Ref: first.snap.KeyGroups[g]}, {Checkpoint: 2, Ref: snap.KeyGroups[g]}}
		delete(snap.KeyGroups, g)
	}
	if err := m.RecordSnapshot(ctx, "j", 2, snap); err != nil {
		t.Fatal(err)
	}
	hs, err := m.Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []LocalHolding{
		{Job: "j", Operator: "count", Checkpoint: 1, KeyGroups: []keygroups.Range{{Start: 0, End: 1}}, KeyGroupBytes: 200, Bytes: 200},
		{Job: "j", Operator: "count", Checkpoint: 2, KeyGroups: []keygroups.Range{{Start: 0, End: 1}, {Start: 5, End: 5}},
			KeyGroupBytes: 2*(100+10) + 10, Bytes: 2*(100+10) + 10, ChainBytes: 2 * (100 + 10)},
	}
	if !reflect.DeepEqual(hs, want) {
		t.Fatalf("inventory\n%+v\nwant\n%+v", hs, want)
	}
	// Without checkpoint 1's blob, the chains are not held; group 5 is.
	if err := local.fs.RemoveAll(local.abs("j/" + checkpointDir(1) + "/count")); err != nil {
		t.Fatal(err)
	}
	if hs, err = m.Inventory(ctx); err != nil {
		t.Fatal(err)
	}
	want = []LocalHolding{{Job: "j", Operator: "count", Checkpoint: 2, KeyGroups: []keygroups.Range{{Start: 5, End: 5}}, KeyGroupBytes: 10, Bytes: 10}}
	if !reflect.DeepEqual(hs, want) {
		t.Fatalf("inventory without checkpoint 1's blob\n%+v\nwant\n%+v", hs, want)
	}
}
