package store

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckSplits: VerifyCheckpoint passes well-formed splits pass; a split outside its count, at a
// negative offset, or stored twice for one operator is corrupt, named.
func TestCheckSplits(t *testing.T) {
	good := func() *Manifest {
		return &Manifest{Job: "j", CheckpointID: 3, Tasks: []TaskSnapshot{
			{Operator: "src", Instance: 0, SourceOffset: 10, Splits: []SourceSplit{{ID: 0, Of: 3, Offset: 4}, {ID: 2, Of: 3, Offset: 6}}},
			{Operator: "src", Instance: 1, SourceOffset: 5, Splits: []SourceSplit{{ID: 1, Of: 3, Offset: 5}}},
			{Operator: "other", Instance: 0, SourceOffset: 0, Splits: []SourceSplit{{ID: 0, Of: 3}}},
		}}
	}
	if err := VerifyCheckpoint(t.Context(), nil, good()); err != nil {
		t.Fatalf("well-formed splits: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(m *Manifest)
		wants string
	}{
		{"id beyond its count", func(m *Manifest) { m.Tasks[1].Splits[0].ID = 3 }, "src[1]: source split 3 of 3"},
		{"negative id", func(m *Manifest) { m.Tasks[1].Splits[0].ID = -1 }, "split -1 of 3"},
		{"no count", func(m *Manifest) { m.Tasks[1].Splits[0].Of = 0 }, "split 1 of 0"},
		{"negative offset", func(m *Manifest) { m.Tasks[0].Splits[1].Offset = -2 }, "at offset -2"},
		{"stored twice", func(m *Manifest) { m.Tasks[1].Splits[0].ID = 2 }, "split 2 of 3 stored by instances 0 and 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.edit(m)
			// VerifyCheckpoint checks the splits before it reads any blob
			// (this manifest names none).
			err := VerifyCheckpoint(t.Context(), nil, m)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("error %v, want ErrCorrupt containing %q", err, tc.wants)
			}
		})
	}
}
