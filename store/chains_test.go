package store

import (
	"errors"
	"slices"
	"testing"
)

// chainStep is one checkpoint of an incremental job: per key group, the
// checkpoints whose sections its chain reads (the last is itself).
type chainStep map[int][]uint64

// commitChained stores checkpoint id's blob and a manifest whose key groups
// are the given chains (a one-link chain is a whole section in KeyGroups).
func commitChained(t *testing.T, s Store, job string, id uint64, chains chainStep, refs map[uint64]BlobRef) *Manifest {
	t.Helper()
	refs[id] = putBlobs(t, s, job, id, "count/0/state")[0]
	ts := TaskSnapshot{Operator: "count", Instance: 0, SourceOffset: -1, KeyGroups: map[int]BlobRef{}, KeyGroupChains: map[int][]ChainLink{}}
	for g, ids := range chains {
		if len(ids) == 1 {
			ts.KeyGroups[g] = refs[ids[0]]
			continue
		}
		for _, c := range ids {
			ts.KeyGroupChains[g] = append(ts.KeyGroupChains[g], ChainLink{Checkpoint: c, Ref: refs[c]})
		}
	}
	m := &Manifest{Job: job, CheckpointID: id, Fingerprint: "fp", MaxParallelism: 2, Parallelism: map[string]int{"count": 1},
		KeyGroups: map[string][]int32{"count": {0, 0}}, Tasks: []TaskSnapshot{ts}, Mode: "aligned"}
	if err := s.CommitManifest(testCtx(t), m); err != nil {
		t.Fatalf("commit %d: %v", id, err)
	}
	return m
}

// runRetireKeepsReferenced retains the newest two checkpoints of a job
// whose key-group chains read older checkpoints' blobs: retention deletes a
// subsumed checkpoint's blobs exactly when no retained checkpoint reads
// them, every chain of a retained checkpoint stays readable, and the
// start-up sweep of manifest-less checkpoints leaves referenced blobs alone.
func runRetireKeepsReferenced(t *testing.T, s Store) {
	ctx, job := testCtx(t), "inc"
	refs := map[uint64]BlobRef{}
	steps := []chainStep{
		{0: {1}, 1: {1}},
		{0: {1, 2}, 1: {2}},
		{0: {1, 2, 3}, 1: {2, 3}},
		{0: {4}, 1: {2, 3, 4}},
		{0: {4, 5}, 1: {2, 3, 4, 5}},
	}
	type want struct{ deleted, kept []uint64 }
	wants := []want{{}, {}, {kept: []uint64{1}}, {kept: []uint64{1, 2}}, {deleted: []uint64{1}, kept: []uint64{2, 3}}}
	manifests := map[uint64]*Manifest{}
	var retained []uint64
	for i, st := range steps {
		id := uint64(i + 1)
		manifests[id] = commitChained(t, s, job, id, st, refs)
		retained = append(retained, id)
		var out []uint64
		if len(retained) > 2 {
			out, retained = retained[:len(retained)-2], retained[len(retained)-2:]
			retained = slices.Clone(retained)
		}
		got, err := Retire(ctx, s, job, out, retained)
		if err != nil {
			t.Fatalf("retire after checkpoint %d: %v", id, err)
		}
		if !slices.Equal(got.Deleted, wants[i].deleted) || !slices.Equal(got.Kept, wants[i].kept) {
			t.Fatalf("after checkpoint %d: deleted %v kept %v, want deleted %v kept %v", id, got.Deleted, got.Kept, wants[i].deleted, wants[i].kept)
		}
		wantList(t, s, job, retained)
		checkChainsReadable(t, s, job, retained, manifests)
	}
	if _, err := s.GetBlob(ctx, job, 1, refs[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blob of checkpoint 1, read by no retained checkpoint: %v, want ErrNotFound", err)
	}
	if _, err := DeleteUncommitted(ctx, s, job, 6); err != nil {
		t.Fatal(err)
	}
	checkChainsReadable(t, s, job, retained, manifests)
}

// checkChainsReadable reads every link of every chain of the checkpoints.
func checkChainsReadable(t *testing.T, s Store, job string, ids []uint64, manifests map[uint64]*Manifest) {
	t.Helper()
	for _, id := range ids {
		for _, ts := range manifests[id].Tasks {
			for g, chain := range ts.KeyGroupChains {
				for _, l := range chain {
					if _, err := s.GetBlob(testCtx(t), job, l.Checkpoint, l.Ref); err != nil {
						t.Fatalf("checkpoint %d key group %d: section of checkpoint %d: %v", id, g, l.Checkpoint, err)
					}
				}
			}
		}
	}
}

func TestRetireKeepsReferencedLocal(t *testing.T) {
	s := localHarness().open(t)
	defer s.Close()
	runRetireKeepsReferenced(t, s)
}

func TestRetireKeepsReferencedJetStream(t *testing.T) {
	s := jsHarness(t).open(t)
	defer s.Close()
	runRetireKeepsReferenced(t, s)
}

// TestCommitRejectsBadChain: a chain link from a later checkpoint, or out of
// order, is refused at commit.
func TestCommitRejectsBadChain(t *testing.T) {
	s := localHarness().open(t)
	defer s.Close()
	refs := map[uint64]BlobRef{}
	refs[1] = putBlobs(t, s, "j", 1, "count/0/state")[0]
	for _, chain := range [][]ChainLink{{{Checkpoint: 2, Ref: refs[1]}, {Checkpoint: 1, Ref: refs[1]}}, {{Checkpoint: 3, Ref: refs[1]}}} {
		m := &Manifest{Job: "j", CheckpointID: 2, MaxParallelism: 1, Tasks: []TaskSnapshot{{Operator: "count", KeyGroupChains: map[int][]ChainLink{0: chain}}}}
		if err := s.CommitManifest(testCtx(t), m); err == nil {
			t.Fatalf("chain %v committed", chain)
		}
	}
}
