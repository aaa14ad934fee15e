package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// channelStep is one checkpoint whose channel state is parts read from the
// blobs of the listed checkpoints (itself included).
type channelStep []uint64

// commitChannelParts stores checkpoint id's blob and a manifest whose one
// channel is a part of each listed checkpoint's blob.
func commitChannelParts(t *testing.T, s Store, job string, id uint64, from channelStep, refs map[uint64]BlobRef) *Manifest {
	t.Helper()
	refs[id] = putBlobs(t, s, job, id, "count/0/state")[0]
	cb := ChannelBlob{Input: 1}
	for _, c := range from {
		r := refs[c]
		part := BlobRef{Name: r.Name, Size: 4, CRC32C: Checksum(blobData(job, c, r.Name)[2:6]), Offset: 2, Whole: r.Size}
		cb.Parts = append(cb.Parts, ChannelPart{Checkpoint: c, Ref: part, Buffers: 2})
		cb.Buffers += 2
		if c == id {
			cb.Blob = part
		}
	}
	ts := TaskSnapshot{Operator: "count", Instance: 0, SourceOffset: -1, Channels: []ChannelBlob{cb}}
	m := &Manifest{Job: job, CheckpointID: id, Fingerprint: "fp", MaxParallelism: 2, Parallelism: map[string]int{"count": 1},
		KeyGroups: map[string][]int32{"count": {0, 0}}, Tasks: []TaskSnapshot{ts}, Mode: "unaligned"}
	if err := s.CommitManifest(testCtx(t), m); err != nil {
		t.Fatalf("commit %d: %v", id, err)
	}
	return m
}

// runRetireKeepsChannelParts retains the newest two checkpoints of a job
// whose channel state reads buffers older checkpoints stored: a subsumed
// checkpoint keeps its blobs (not its manifest) while a retained one reads
// them, and is deleted once none does; every part of a retained checkpoint
// stays readable and verifies.
func runRetireKeepsChannelParts(t *testing.T, s Store) {
	ctx, job := testCtx(t), "chan"
	refs := map[uint64]BlobRef{}
	steps := []channelStep{{1}, {1, 2}, {1, 2, 3}, {4}, {4, 5}}
	type want struct{ deleted, kept []uint64 }
	wants := []want{{}, {}, {kept: []uint64{1}}, {kept: []uint64{1, 2}}, {deleted: []uint64{1, 2, 3}}}
	manifests := map[uint64]*Manifest{}
	var retained []uint64
	for i, st := range steps {
		id := uint64(i + 1)
		manifests[id] = commitChannelParts(t, s, job, id, st, refs)
		retained = append(retained, id)
		var out []uint64
		if len(retained) > 2 {
			out, retained = retained[:len(retained)-2], slices.Clone(retained[len(retained)-2:])
		}
		got, err := Retire(ctx, s, job, out, retained)
		if err != nil {
			t.Fatalf("retire after checkpoint %d: %v", id, err)
		}
		if !slices.Equal(got.Deleted, wants[i].deleted) || !slices.Equal(got.Kept, wants[i].kept) {
			t.Fatalf("after checkpoint %d: deleted %v kept %v, want deleted %v kept %v", id, got.Deleted, got.Kept, wants[i].deleted, wants[i].kept)
		}
		wantList(t, s, job, retained)
		for _, r := range retained {
			if err := VerifyCheckpoint(ctx, s, manifests[r]); err != nil {
				t.Fatalf("after checkpoint %d: retained %d: %v", id, r, err)
			}
		}
	}
	if _, err := s.GetBlob(ctx, job, 2, refs[2]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blob of checkpoint 2, read by no retained checkpoint: %v, want ErrNotFound", err)
	}
}

func TestRetireKeepsChannelPartsLocal(t *testing.T) {
	s := localHarness().open(t)
	defer s.Close()
	runRetireKeepsChannelParts(t, s)
}

func TestRetireKeepsChannelPartsJetStream(t *testing.T) {
	s := jsHarness(t).open(t)
	defer s.Close()
	runRetireKeepsChannelParts(t, s)
}

// TestCommitRejectsBadChannelParts: a part of a later checkpoint, an empty
// part, or parts that do not add up to the channel's buffers are refused.
func TestCommitRejectsBadChannelParts(t *testing.T) {
	s := localHarness().open(t)
	defer s.Close()
	ref := putBlobs(t, s, "j", 1, "count/0/state")[0]
	for _, cb := range []ChannelBlob{
		{Buffers: 1, Parts: []ChannelPart{{Checkpoint: 3, Ref: ref, Buffers: 1}}},
		{Buffers: 0, Parts: []ChannelPart{{Checkpoint: 1, Ref: ref, Buffers: 0}}},
		{Buffers: 3, Parts: []ChannelPart{{Checkpoint: 1, Ref: ref, Buffers: 2}}},
		{Buffers: 1, Parts: []ChannelPart{{Checkpoint: 1, Ref: BlobRef{Name: "../x"}, Buffers: 1}}},
	} {
		m := &Manifest{Job: "j", CheckpointID: 2, MaxParallelism: 1, Tasks: []TaskSnapshot{{Operator: "count", Channels: []ChannelBlob{cb}}}}
		if err := s.CommitManifest(testCtx(t), m); err == nil {
			t.Fatalf("channel %+v committed", cb)
		}
	}
}

// TestMirrorReadsReferencedChannelRangeLocally: a later checkpoint's part
// that is a range of the channel section an earlier checkpoint indexed on
// this node is read from the local copy; a local copy damaged in that range
// is read from the checkpoint store instead.
func TestMirrorReadsReferencedChannelRangeLocally(t *testing.T) {
	m, primary, local := newMirror(t)
	ctx := testCtx(t)
	data := []byte("key groups|frame one|frame two|frame three")
	whole, err := m.PutBlob(ctx, "j", 1, "count/0/state", data)
	if err != nil {
		t.Fatal(err)
	}
	own := Section(whole, 11, data[11:])
	ts := TaskSnapshot{Operator: "count", Instance: 0, Channels: []ChannelBlob{{Input: 1, Blob: own, Buffers: 3,
		Parts: []ChannelPart{{Checkpoint: 1, Ref: own, Buffers: 3}}}}}
	if err := m.RecordSnapshot(ctx, "j", 1, ts); err != nil {
		t.Fatal(err)
	}
	// Checkpoint 2 refers to frames two and three, written by checkpoint 1.
	part := Section(whole, 21, data[21:])
	req := []SectionRequest{{Key: ChannelKey("count", 0, 1), Ref: part}}
	got, stats, err := m.ReadSections(ctx, "j", 1, req)
	if err != nil || !bytes.Equal(got[0], data[21:]) {
		t.Fatalf("read referenced range: %q, %v", got, err)
	}
	if stats.LocalSections != 1 || stats.RemoteSections != 0 {
		t.Fatalf("referenced range read %d sections locally, %d remotely; want it local", stats.LocalSections, stats.RemoteSections)
	}
	lp := filepath.Join(local.Dir(), "j", "chk-00000000000000000001", "count", "0", "state")
	damaged := bytes.Clone(data)
	damaged[25] ^= 0x20
	if err := os.WriteFile(lp, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	got, stats, err = m.ReadSections(ctx, "j", 1, req)
	if err != nil || !bytes.Equal(got[0], data[21:]) || stats.RemoteSections != 1 {
		t.Fatalf("damaged local range: %q, %+v, %v; want it read from the store", got, stats, err)
	}
	// Damaged in the store as well: a clear error.
	pp := filepath.Join(primary.Dir(), "j", "chk-00000000000000000001", "count", "0", "state")
	if err := os.WriteFile(pp, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.ReadSections(ctx, "j", 1, req); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("range damaged in both copies: %v, want ErrCorrupt", err)
	}
}
