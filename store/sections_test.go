package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestGetSections: sections of one blob come back verified, in order; a
// corrupt section is reported as a SectionError naming its index.
func TestGetSections(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	whole := []byte("aaaabbbbbbcc")
	ref, err := l.PutBlob(ctx, "j", 2, "op/0/state", whole)
	if err != nil {
		t.Fatal(err)
	}
	refs := []BlobRef{Section(ref, 4, whole[4:10]), Section(ref, 0, whole[:4]), Section(ref, 10, whole[10:])}
	for name, st := range map[string]Store{"section reader": l, "plain store": plainStore{l}} {
		got, err := GetSections(ctx, st, "j", 2, refs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, want := range [][]byte{[]byte("bbbbbb"), []byte("aaaa"), []byte("cc")} {
			if !bytes.Equal(got[i], want) {
				t.Fatalf("%s: section %d = %q, want %q", name, i, got[i], want)
			}
		}
	}
	p := filepath.Join(l.Dir(), "j", "chk-00000000000000000002", "op", "0", "state")
	if err := os.WriteFile(p, []byte("aaaabbbbbbXc"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = GetSections(ctx, l, "j", 2, refs)
	var se *SectionError
	if !errors.As(err, &se) || se.Index != 2 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt third section: %v", err)
	}
}

// plainStore hides a store's GetSections.
type plainStore struct{ Store }
