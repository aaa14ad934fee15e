package placement

import (
	"maps"
	"slices"
	"testing"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/task"
)

// TestAssignStateLocality: a task (or a whole pipeline) goes where its state
// is local while that node is live and has room; otherwise placement is
// what it is without state location.
func TestAssignStateLocality(t *testing.T) {
	type m = map[task.ID]string
	type local = map[task.ID][]Copy
	pipes := m{tid("src", 0): "p0", tid("count", 0): "p0", tid("src", 1): "p1", tid("count", 1): "p1"}
	for _, tc := range []struct {
		name string
		in   Input
		want m
	}{
		{
			name: "state beats the spreading rule",
			in: Input{Tasks: ops("map", 2), Nodes: []Slot{{"n1", 4}, {"n2", 4}, {"n3", 4}},
				Local: local{tid("map", 0): {{Node: "n3"}}, tid("map", 1): {{Node: "n3"}}}},
			want: m{tid("map", 0): "n3", tid("map", 1): "n3"},
		},
		{
			name: "state beats the previous node",
			in: Input{Tasks: ops("map", 1), Nodes: []Slot{{"n1", 4}, {"n2", 4}},
				Prev: m{tid("map", 0): "n1"}, Local: local{tid("map", 0): {{Node: "n2"}}}},
			want: m{tid("map", 0): "n2"},
		},
		{
			name: "the node with more bytes wins",
			in: Input{Tasks: ops("map", 1), Nodes: []Slot{{"n1", 4}, {"n2", 4}},
				Local: local{tid("map", 0): {{Node: "n1", Bytes: 10}, {Node: "n2", Bytes: 900}}}},
			want: m{tid("map", 0): "n2"},
		},
		{
			name: "a pipeline goes whole to the node holding most of its state",
			in: Input{Tasks: ops("src", 2, "count", 2), Nodes: []Slot{{"n1", 4}, {"n2", 4}}, Groups: pipes,
				Local: local{tid("count", 0): {{Node: "n2", Bytes: 500}}, tid("src", 0): {{Node: "n1", Bytes: 8}}}},
			want: m{tid("src", 0): "n2", tid("count", 0): "n2", tid("src", 1): "n1", tid("count", 1): "n1"},
		},
		{
			name: "a copy on a node that is not live counts for nothing",
			in: Input{Tasks: ops("map", 2), Nodes: []Slot{{"n1", 4}, {"n2", 4}},
				Local: local{tid("map", 0): {{Node: "gone", Bytes: 1 << 20}}}},
			want: m{tid("map", 0): "n1", tid("map", 1): "n2"},
		},
		{
			name: "a full node with the state: placed as without it",
			in: Input{Tasks: ops("map", 2), Nodes: []Slot{{"n1", 1}, {"n2", 4}},
				Prev: m{tid("map", 0): "n1"}, Local: local{tid("map", 1): {{Node: "n1"}}}},
			// map[1] takes n1's one slot by its state; map[0]'s previous
			// node is full then, so it goes to n2.
			want: m{tid("map", 0): "n2", tid("map", 1): "n1"},
		},
		{
			name: "a group that does not fit whole on its state's node is placed as without it",
			in: Input{Tasks: ops("src", 1, "count", 1), Nodes: []Slot{{"n1", 1}, {"n2", 4}}, Groups: pipes,
				Local: local{tid("count", 0): {{Node: "n1"}}}},
			want: m{tid("src", 0): "n2", tid("count", 0): "n2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assign(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("Assign = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAssignWithoutStateLocationIsPlaceGrouped: with no state location (nil
// or empty) Assign gives exactly PlaceGrouped's placement.
func TestAssignWithoutStateLocationIsPlaceGrouped(t *testing.T) {
	tasks := ops("src", 3, "count", 3, "sink", 3)
	groups := map[task.ID]string{}
	for _, tk := range tasks {
		groups[tk] = "p" + string(rune('0'+tk.Instance))
	}
	nodes := []Slot{{"n1", 4}, {"n2", 2}, {"n3", 5}}
	prev := map[task.ID]string{tid("count", 1): "n3"}
	want, err := PlaceGrouped(tasks, nodes, prev, groups)
	if err != nil {
		t.Fatal(err)
	}
	for _, local := range []map[task.ID][]Copy{nil, {}} {
		got, err := Assign(Input{Tasks: tasks, Nodes: nodes, Prev: prev, Groups: groups, Local: local})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("Assign with state location %v = %v, want PlaceGrouped's %v", local, got, want)
		}
	}
}

// TestRestartPrefersLocalState: a restarted task whose node died goes to the
// eligible node that holds its state, unless its pipeline already moved.
func TestRestartPrefersLocalState(t *testing.T) {
	ref := tid("count", 1)
	r := Restart{Job: "j", Self: "n1", Nodes: []string{"n1", "n2", "n3"},
		Eligible: map[string]cluster.Heartbeat{"n1": {Node: "n1", Slots: 8}, "n3": {Node: "n3", Slots: 8}},
		Placed:   map[task.ID]string{ref: "n2", tid("count", 0): "n1"},
		Local:    map[task.ID][]Copy{ref: {{Node: "n1", Bytes: 64}}}}
	if got, err := r.Place(ref); err != nil || got != "n1" {
		t.Fatalf("Place = %s, %v; want n1, where count[1]'s state is", got, err)
	}
	r.Local = nil
	if got, err := r.Place(ref); err != nil || got != "n3" {
		t.Fatalf("without state location Place = %s, %v; want n3 (fewest count instances)", got, err)
	}
	r.Groups = map[task.ID]string{ref: "p1", tid("src", 1): "p1"}
	r.Placed[tid("src", 1)] = "n3"
	r.Local = map[task.ID][]Copy{ref: {{Node: "n1"}}}
	if got, err := r.Place(ref); err != nil || got != "n3" {
		t.Fatalf("Place = %s, %v; want n3, where its pipeline went", got, err)
	}
}

// TestEligible: a restarted node (another start time than the one given a
// part) and a node without a part are not eligible; the coordinator's own
// node is.
func TestEligible(t *testing.T) {
	alive := []cluster.Heartbeat{{Node: "n1", StartedUnixNano: 9}, {Node: "n2", StartedUnixNano: 5}, {Node: "n3", StartedUnixNano: 7}, {Node: "n4", StartedUnixNano: 1}}
	incarn := map[string]int64{"n1": 1, "n2": 5, "n3": 6}
	got := Eligible(alive, incarn, "n1")
	var nodes []string
	for n := range got {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"n1", "n2"}) {
		t.Fatalf("eligible %v, want n1 (the coordinator's) and n2 (same incarnation)", nodes)
	}
}
