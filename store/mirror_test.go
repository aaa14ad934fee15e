package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

func newMirror(t *testing.T) (*Mirror, *Local, *Local) {
	t.Helper()
	primary, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Mirror{Primary: primary, Local: local, Log: zerolog.Nop()}, primary, local
}

// TestMirrorWritesBothAndReadsLocalFirst: a blob lands in both stores; a
// read is served by the local copy, and by the primary when the copy is
// missing or corrupt.
func TestMirrorWritesBothAndReadsLocalFirst(t *testing.T) {
	m, primary, local := newMirror(t)
	ctx := testCtx(t)
	data := []byte("key group 7 state")
	ref, err := m.PutBlob(ctx, "j", 3, "count/0/state", data)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Store{"primary": primary, "local": local} {
		got, err := s.GetBlob(ctx, "j", 3, ref)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s copy: %q, %v", name, got, err)
		}
	}
	// Corrupt the primary: the read must come from the local copy.
	p := filepath.Join(primary.Dir(), "j", "chk-00000000000000000003", "count", "0", "state")
	if err := os.WriteFile(p, []byte("garbage garbage!!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := m.GetBlob(ctx, "j", 3, ref); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("local-first read: %q, %v", got, err)
	}
	// Now corrupt the local copy and repair the primary: the read falls back.
	if _, err := primary.PutBlob(ctx, "j", 3, "count/0/state", data); err != nil {
		t.Fatal(err)
	}
	lp := filepath.Join(local.Dir(), "j", "chk-00000000000000000003", "count", "0", "state")
	if err := os.WriteFile(lp, []byte("garbage garbage!!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := m.GetBlob(ctx, "j", 3, ref); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("fallback read: %q, %v", got, err)
	}
	// Both corrupt: the error says so.
	if err := os.WriteFile(p, []byte("garbage garbage!!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetBlob(ctx, "j", 3, ref); err == nil {
		t.Fatal("a blob corrupt in both stores was returned")
	}
}

// TestMirrorManifestsComeFromThePrimary: checkpoints exist when the primary
// has them; deleting removes both copies.
func TestMirrorManifestsComeFromThePrimary(t *testing.T) {
	m, _, local := newMirror(t)
	ctx := testCtx(t)
	refs := putBlobs(t, m, "j", 1, "a")
	if err := m.CommitManifest(ctx, sampleManifest("j", 1, refs)); err != nil {
		t.Fatal(err)
	}
	latest, err := m.Latest(ctx, "j")
	if err != nil || latest.CheckpointID != 1 {
		t.Fatalf("latest: %+v, %v", latest, err)
	}
	if ids, err := local.List(ctx, "j"); err != nil || len(ids) != 1 {
		t.Fatalf("local copy of the manifest: %v, %v", ids, err)
	}
	if err := m.Delete(ctx, "j", 1); err != nil {
		t.Fatal(err)
	}
	if ids, _ := local.List(ctx, "j"); len(ids) != 0 {
		t.Fatalf("local copy survived delete: %v", ids)
	}
	if ids, _ := m.List(ctx, "j"); len(ids) != 0 {
		t.Fatalf("primary survived delete: %v", ids)
	}
}

// TestMirrorPruneLocal drops local copies only.
func TestMirrorPruneLocal(t *testing.T) {
	m, primary, local := newMirror(t)
	ctx := testCtx(t)
	for _, id := range []uint64{1, 2} {
		refs := putBlobs(t, m, "j", id, "a")
		if err := m.CommitManifest(ctx, sampleManifest("j", id, refs)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.PruneLocal(ctx, "j", []uint64{1, 7}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := local.List(ctx, "j"); len(ids) != 1 || ids[0] != 2 {
		t.Fatalf("local copies after prune: %v", ids)
	}
	if ids, _ := primary.List(ctx, "j"); len(ids) != 2 {
		t.Fatalf("prune touched the primary: %v", ids)
	}
}

// TestMirrorSweepsUncommittedInBothStores: the primary says which
// checkpoints have no valid manifest; DeleteUncommitted through the mirror
// removes them from the primary and from this node's copy.
func TestMirrorSweepsUncommittedInBothStores(t *testing.T) {
	m, primary, local := newMirror(t)
	ctx := testCtx(t)
	commitSectioned(t, m, "j", 2)
	if _, err := m.PutBlob(ctx, "j", 3, "count/0/state", []byte("aborted")); err != nil {
		t.Fatal(err)
	}
	got, err := DeleteUncommitted(ctx, m, "j", 4)
	if err != nil || len(got) != 1 || got[0] != 3 {
		t.Fatalf("DeleteUncommitted through the mirror = %v, %v; want [3]", got, err)
	}
	for name, s := range map[string]*Local{"primary": primary, "local": local} {
		if left, err := s.Uncommitted(ctx, "j"); err != nil || len(left) != 0 {
			t.Fatalf("%s still holds uncommitted %v (%v)", name, left, err)
		}
	}
	wantList(t, m, "j", []uint64{2})
}

// TestMirrorSectionedWritesBoth: a blob stored by sections only lands in
// the primary and the local copy, and its sections read from either.
func TestMirrorSectionedWritesBoth(t *testing.T) {
	m, primary, local := newMirror(t)
	ctx := testCtx(t)
	data := []byte("group one|group two")
	ref, err := m.PutBlob(Sectioned(ctx), "j", 3, "count/0/state", data)
	if ref.CRC32C != 0 {
		t.Fatalf("sectioned ref %+v has a checksum", ref)
	}
	if err != nil {
		t.Fatal(err)
	}
	sec := SectionSummed(ref, 10, 9, Checksum(data[10:]))
	for name, s := range map[string]Store{"primary": primary, "local": local, "mirror": m} {
		got, err := s.GetBlob(ctx, "j", 3, sec)
		if err != nil || !bytes.Equal(got, data[10:]) {
			t.Fatalf("%s: section %q, %v", name, got, err)
		}
	}
}
