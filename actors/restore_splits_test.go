package actors

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/weirstream/weir/store"
)

// sp is split id of of at offset off.
func sp(id, of int, off int64) store.SourceSplit {
	return store.SourceSplit{ID: id, Of: of, Offset: off}
}

// splitManifest is a manifest of source "source" whose instance i stored
// splits[i].
func splitManifest(splits ...[]store.SourceSplit) *store.Manifest {
	m := &store.Manifest{Parallelism: map[string]int{"source": len(splits)}}
	for i, ss := range splits {
		var off int64
		for _, s := range ss {
			off += s.Offset
		}
		m.Tasks = append(m.Tasks, store.TaskSnapshot{Operator: "source", Instance: i, SourceOffset: off, Splits: ss},
			store.TaskSnapshot{Operator: "count", Instance: i, SourceOffset: -1})
	}
	return m
}

// restoreAt is what the tasks of a restore of m at parallelism n store in
// their next checkpoint, as long as they have read nothing more: the splits
// each was handed.
func restoreAt(t *testing.T, m *store.Manifest, n int) *store.Manifest {
	t.Helper()
	all, err := AssignSplits(checkpointSplits(m, "source"), n)
	if err != nil {
		t.Fatal(err)
	}
	return splitManifest(all...)
}

// TestAssignSplits: splits are dealt by (Of, ID), the k-th to instance
// k mod n; the same parallelism gives every instance its own splits back,
// instances beyond the splits get none.
func TestAssignSplits(t *testing.T) {
	tests := []struct {
		name   string
		splits []store.SourceSplit
		n      int
		want   [][]store.SourceSplit
	}{
		{"2→2 keeps each its own", []store.SourceSplit{sp(1, 2, 7), sp(0, 2, 5)}, 2, [][]store.SourceSplit{{sp(0, 2, 5)}, {sp(1, 2, 7)}}},
		{"2→3 leaves one idle", []store.SourceSplit{sp(0, 2, 5), sp(1, 2, 7)}, 3, [][]store.SourceSplit{{sp(0, 2, 5)}, {sp(1, 2, 7)}, nil}},
		{"2→1 takes both", []store.SourceSplit{sp(1, 2, 7), sp(0, 2, 5)}, 1, [][]store.SourceSplit{{sp(0, 2, 5), sp(1, 2, 7)}}},
		{"2→5 leaves three idle", []store.SourceSplit{sp(0, 2, 5), sp(1, 2, 7)}, 5, [][]store.SourceSplit{{sp(0, 2, 5)}, {sp(1, 2, 7)}, nil, nil, nil}},
		{"5→2 balanced", []store.SourceSplit{sp(4, 5, 1), sp(3, 5, 1), sp(2, 5, 1), sp(1, 5, 1), sp(0, 5, 1)}, 2,
			[][]store.SourceSplit{{sp(0, 5, 1), sp(2, 5, 1), sp(4, 5, 1)}, {sp(1, 5, 1), sp(3, 5, 1)}}},
		{"none", nil, 2, [][]store.SourceSplit{nil, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AssignSplits(tc.splits, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("AssignSplits(%v, %d) = %v, want %v", tc.splits, tc.n, got, tc.want)
			}
		})
	}
	if _, err := AssignSplits([]store.SourceSplit{sp(0, 1, 0)}, 0); err == nil {
		t.Fatal("AssignSplits to 0 instances: no error")
	}
}

// TestCheckpointSplitsChains: restores after restores (2→3→1, 2→5→2,
// 2→3→3) carry every split of the first run, each once, at its offset;
// idle instances store none and are not mistaken for a manifest written
// before splits were stored.
func TestCheckpointSplitsChains(t *testing.T) {
	first := splitManifest([]store.SourceSplit{sp(0, 2, 40)}, []store.SourceSplit{sp(1, 2, 33)})
	want := []store.SourceSplit{sp(0, 2, 40), sp(1, 2, 33)}
	for _, chain := range [][]int{{3, 1}, {5, 2}, {3, 3}, {5, 1, 4}} {
		t.Run(fmt.Sprint(chain), func(t *testing.T) {
			m := first
			for _, n := range chain {
				m = restoreAt(t, m, n)
				if got := checkpointSplits(m, "source"); !sameSplits(got, want) {
					t.Fatalf("after a restore at %d: splits %v, want %v", n, got, want)
				}
			}
			last := chain[len(chain)-1]
			for i, ts := range m.Tasks {
				if ts.Operator == "source" && ts.Instance >= 2 && len(ts.Splits) != 0 {
					t.Fatalf("task %d at %d: splits %v, want none (idle)", i, last, ts.Splits)
				}
			}
		})
	}
}

// TestCheckpointSplitsOfOldManifests: a manifest written before splits were
// stored reads as split i of p at each task's SourceOffset.
func TestCheckpointSplitsOfOldManifests(t *testing.T) {
	m := &store.Manifest{Parallelism: map[string]int{"source": 3, "count": 3}}
	for i := range 3 {
		m.Tasks = append(m.Tasks, store.TaskSnapshot{Operator: "count", Instance: i, SourceOffset: -1},
			store.TaskSnapshot{Operator: "source", Instance: i, SourceOffset: int64(10 + i)})
	}
	got := checkpointSplits(m, "source")
	want := []store.SourceSplit{sp(0, 3, 10), sp(1, 3, 11), sp(2, 3, 12)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("splits %v, want %v", got, want)
	}
}

// sameSplits reports whether a and b hold the same splits in any order.
func sameSplits(a, b []store.SourceSplit) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[store.SourceSplit]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
		if count[s] < 0 {
			return false
		}
	}
	return true
}
