package web

import (
	"fmt"
	"testing"
)

func TestHeldByReadsTheNodesReportedRanges(t *testing.T) {
	nodes := []Node{
		{ID: "n1", Held: []HeldState{{Job: "kc", Operator: "count", Checkpoint: 4, KeyGroups: [][2]int{{0, 9}, {20, 29}}},
			{Job: "kc", Operator: "count", Checkpoint: 5, KeyGroups: [][2]int{{0, 9}}}}},
		{ID: "n2", Held: []HeldState{{Job: "kc", Operator: "count", Checkpoint: 5, KeyGroups: [][2]int{{5, 14}}},
			{Job: "other", Operator: "count", Checkpoint: 5, KeyGroups: [][2]int{{0, 127}}}}},
		{ID: "n3"},
	}
	held := heldBy(nodes, "kc")
	for g, want := range map[int]string{0: "[n1]", 7: "[n1 n2]", 12: "[n2]", 15: "[]", 25: "[n1]", 127: "[]"} {
		if got := fmt.Sprint(held("count", g)); got != want {
			t.Errorf("group %d held on %s, want %s", g, got, want)
		}
	}
	if got := held("sink", 0); len(got) != 0 {
		t.Errorf("another operator's groups: %v, want none", got)
	}
}
