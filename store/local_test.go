package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func localHarness() harness {
	path := func(s Store, job string, ckpt uint64, name string) string {
		return filepath.Join(s.(*Local).Dir(), job, checkpointDir(ckpt), filepath.FromSlash(name))
	}
	return harness{
		open: func(t *testing.T) Store {
			s, err := NewLocal(filepath.Join(t.TempDir(), "state"))
			if err != nil {
				t.Fatalf("NewLocal: %v", err)
			}
			return s
		},
		rawRead: func(t *testing.T, s Store, job string, ckpt uint64, name string) []byte {
			data, err := os.ReadFile(path(s, job, ckpt, name))
			if err != nil {
				t.Fatalf("raw read: %v", err)
			}
			return data
		},
		rawWrite: func(t *testing.T, s Store, job string, ckpt uint64, name string, data []byte) {
			if err := os.WriteFile(path(s, job, ckpt, name), data, 0o644); err != nil {
				t.Fatalf("raw write: %v", err)
			}
		},
	}
}

func TestLocalConformance(t *testing.T) {
	runConformance(t, localHarness())
}

func TestLocalLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := commit(t, s, "orders", 42)
	chk := filepath.Join(dir, "orders", "chk-00000000000000000042")
	for _, rel := range []string{"_manifest", "count/0/kg-0", "count/0/kg-1"} {
		if _, err := os.Stat(filepath.Join(chk, filepath.FromSlash(rel))); err != nil {
			t.Fatalf("expected file %s: %v", rel, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(chk, "_manifest"))
	if err != nil {
		t.Fatal(err)
	}
	if string(raw[:4]) != manifestMagic {
		t.Fatalf("manifest starts with %q, want magic %q", raw[:4], manifestMagic)
	}
	got, err := DecodeManifest(raw)
	if err != nil || got.CheckpointID != m.CheckpointID {
		t.Fatalf("DecodeManifest(file) = %+v, %v", got, err)
	}
}

// Leftovers of a crash (temporary files, a checkpoint directory without a
// manifest, unrelated directories) are never mistaken for checkpoints.
func TestLocalIgnoresCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	s, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	commit(t, s, "job1", 1)
	chk2 := filepath.Join(dir, "job1", checkpointDir(2))
	for _, p := range []string{chk2, filepath.Join(dir, "job1", "chk-7"), filepath.Join(dir, "job1", "lost+found")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A temp manifest that was never renamed, and a stray file.
	if err := os.WriteFile(filepath.Join(chk2, ".tmp-123"), []byte("WRMF partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job1", "chk-00000000000000000003"), []byte("file, not dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantList(t, s, "job1", []uint64{1})
	latest, err := s.Latest(ctx, "job1")
	if err != nil || latest.CheckpointID != 1 {
		t.Fatalf("Latest = %+v, %v; want checkpoint 1", latest, err)
	}
	got, err := s.Uncommitted(ctx, "job1")
	if err != nil || !slices.Equal(got, []uint64{2}) {
		t.Fatalf("Uncommitted = %v, %v; want [2]", got, err)
	}
	if err := s.Delete(ctx, "job1", 2); err != nil {
		t.Fatalf("Delete(2): %v", err)
	}
	if _, err := os.Stat(chk2); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint directory 2 still exists: %v", err)
	}
}

// A Local store opened again on the same directory sees the same checkpoints
// (the node-restart case).
func TestLocalReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := commit(t, s, "job1", 3)
	s.Close()
	s2, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	latest, err := s2.Latest(context.Background(), "job1")
	if err != nil || latest.CheckpointID != m.CheckpointID {
		t.Fatalf("Latest after reopen = %+v, %v", latest, err)
	}
	if _, err := s2.GetBlob(context.Background(), "job1", 3, latest.Tasks[0].KeyGroups[1]); err != nil {
		t.Fatalf("GetBlob after reopen: %v", err)
	}
}
