package placement

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/task"
)

// ops builds the tasks of operators given as name, parallelism pairs.
func ops(spec ...any) []task.ID {
	var out []task.ID
	for i := 0; i < len(spec); i += 2 {
		for k := 0; k < spec[i+1].(int); k++ {
			out = append(out, tid(spec[i].(string), k))
		}
	}
	return out
}

func TestPlace(t *testing.T) {
	type m = map[task.ID]string
	for _, tc := range []struct {
		name    string
		tasks   []task.ID
		nodes   []Slot
		prev    m
		want    m
		wantErr string
	}{
		{
			name:  "one node takes everything",
			tasks: ops("src", 1, "map", 2),
			nodes: []Slot{{"n1", 4}},
			want:  m{tid("map", 0): "n1", tid("map", 1): "n1", tid("src", 0): "n1"},
		},
		{
			name:  "three nodes spread each operator",
			tasks: ops("src", 3, "map", 3),
			nodes: []Slot{{"n3", 4}, {"n1", 4}, {"n2", 4}},
			want: m{
				tid("map", 0): "n1", tid("map", 1): "n2", tid("map", 2): "n3",
				tid("src", 0): "n1", tid("src", 1): "n2", tid("src", 2): "n3",
			},
		},
		{
			name:  "most free slots first",
			tasks: ops("map", 2),
			nodes: []Slot{{"n1", 1}, {"n2", 3}, {"n3", 2}},
			want:  m{tid("map", 0): "n2", tid("map", 1): "n3"},
		},
		{
			name:  "more instances than nodes: at most one extra per node",
			tasks: ops("map", 5),
			nodes: []Slot{{"a", 5}, {"b", 5}},
			want:  m{tid("map", 0): "a", tid("map", 1): "b", tid("map", 2): "a", tid("map", 3): "b", tid("map", 4): "a"},
		},
		{
			name:    "not enough slots",
			tasks:   ops("src", 2, "map", 4),
			nodes:   []Slot{{"n1", 2}, {"n2", 1}},
			wantErr: "3 slots missing",
		},
		{
			name:    "no nodes",
			tasks:   ops("src", 1),
			wantErr: "1 slots missing",
		},
		{
			name:  "prev kept even if not the spread choice",
			tasks: ops("map", 2),
			nodes: []Slot{{"n1", 2}, {"n2", 2}},
			prev:  m{tid("map", 0): "n2", tid("map", 1): "n2"},
			want:  m{tid("map", 0): "n2", tid("map", 1): "n2"},
		},
		{
			name:  "prev on dead node moved, others stay",
			tasks: ops("map", 3),
			nodes: []Slot{{"n1", 2}, {"n2", 2}},
			prev:  m{tid("map", 0): "n1", tid("map", 1): "gone", tid("map", 2): "n2"},
			want:  m{tid("map", 0): "n1", tid("map", 1): "n1", tid("map", 2): "n2"},
		},
		{
			name:  "prev on full node moved",
			tasks: ops("map", 2),
			nodes: []Slot{{"n1", 1}, {"n2", 1}},
			prev:  m{tid("map", 0): "n1", tid("map", 1): "n1"},
			want:  m{tid("map", 0): "n1", tid("map", 1): "n2"},
		},
		{
			name:  "node with no free slots skipped",
			tasks: ops("map", 2),
			nodes: []Slot{{"a", 0}, {"b", 2}, {"c", -1}},
			want:  m{tid("map", 0): "b", tid("map", 1): "b"},
		},
		{
			name:    "duplicate node",
			tasks:   ops("map", 1),
			nodes:   []Slot{{"a", 1}, {"a", 1}},
			wantErr: "listed twice",
		},
		{
			name:    "duplicate task",
			tasks:   []task.ID{tid("map", 0), tid("map", 0)},
			nodes:   []Slot{{"a", 2}},
			wantErr: "listed twice",
		},
		{
			name:  "no tasks",
			nodes: []Slot{{"a", 1}},
			want:  m{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Place(tc.tasks, tc.nodes, tc.prev)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if strings.Contains(tc.wantErr, "missing") && !errors.Is(err, ErrNotEnoughSlots) {
					t.Fatalf("err = %v, want ErrNotEnoughSlots", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestPlaceRespectsCapacity places many shapes and checks no node is over
// its free slots and every task is placed, and that input order is
// irrelevant.
func TestPlaceRespectsCapacity(t *testing.T) {
	nodes := []Slot{{"a", 3}, {"b", 1}, {"c", 4}, {"d", 2}}
	for n := 0; n <= 10; n++ {
		tasks := ops("x", n/2, "y", n-n/2)
		got, err := Place(tasks, nodes, nil)
		if err != nil {
			t.Fatalf("%d tasks: %v", n, err)
		}
		used := map[string]int{}
		for _, task := range tasks {
			node, ok := got[task]
			if !ok {
				t.Fatalf("%d tasks: %v not placed", n, task)
			}
			used[node]++
		}
		for _, s := range nodes {
			if used[s.Node] > s.Free {
				t.Fatalf("%d tasks: node %s used %d > free %d", n, s.Node, used[s.Node], s.Free)
			}
		}
		rev := append([]task.ID(nil), tasks...)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		again, _ := Place(rev, nodes, nil)
		if !maps.Equal(got, again) {
			t.Fatalf("%d tasks: placement depends on task order", n)
		}
	}
	if _, err := Place(ops("x", 11), nodes, nil); !errors.Is(err, ErrNotEnoughSlots) {
		t.Fatalf("11 tasks on 10 slots: err = %v", err)
	}
}

// TestPlaceGroupedKeepsChainsTogether: keycount's shape (source →hash→ count
// →forward→ sink) over 3 nodes: count[i] and sink[i] share a node, the
// operators' instances still spread, and a full node sends a group member
// elsewhere rather than failing.
func TestPlaceGroupedKeepsChainsTogether(t *testing.T) {
	tasks := ops("source", 2, "count", 2, "sink", 2)
	groups := map[task.ID]string{
		tid("count", 0): "count#0", tid("sink", 0): "count#0",
		tid("count", 1): "count#1", tid("sink", 1): "count#1",
	}
	nodes := []Slot{{"n1", 8}, {"n2", 8}, {"n3", 8}}
	got, err := PlaceGrouped(tasks, nodes, nil, groups)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if c, s := got[tid("count", i)], got[tid("sink", i)]; c != s {
			t.Fatalf("count[%d] on %s, sink[%d] on %s: a forward chain was split", i, c, i, s)
		}
	}
	for _, op := range []string{"source", "count"} {
		if got[tid(op, 0)] == got[tid(op, 1)] {
			t.Fatalf("both %s instances on %s", op, got[tid(op, 0)])
		}
	}
	ungrouped, _ := Place(tasks, nodes, nil)
	if ungrouped[tid("count", 0)] == ungrouped[tid("sink", 0)] {
		t.Fatalf("without groups count[0] and sink[0] share %s: the test shows nothing", ungrouped[tid("count", 0)])
	}
	tight := []Slot{{"n1", 1}, {"n2", 5}}
	got, err = PlaceGrouped(tasks, tight, nil, groups)
	if err != nil {
		t.Fatalf("a full node must not fail a grouped placement: %v", err)
	}
	if n := got[tid("count", 0)]; n == "n1" && got[tid("sink", 0)] == "n1" {
		t.Fatal("two tasks on n1, which has one slot")
	}
}

// tid names instance i of operator op.
func tid(op string, i int) task.ID { return task.ID{Operator: op, Instance: i} }
