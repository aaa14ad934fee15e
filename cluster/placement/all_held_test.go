package placement

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/cluster"
)

// TestMissingHeld: a checkpoint's state is all found only when the live
// nodes' holdings at that checkpoint, of that job and operator, cover every
// key group it stores and as many bytes of operator and channel state; a
// checkpoint that stores nothing is never taken as all held.
func TestMissingHeld(t *testing.T) {
	hs := func(job, op string, cp uint64, other int64, ranges ...[2]int) cluster.HeldState {
		return cluster.HeldState{Job: job, Operator: op, Checkpoint: cp, KeyGroups: ranges, KeyGroupBytes: 10, Bytes: 10 + other}
	}
	node := func(id string, h ...cluster.HeldState) cluster.Heartbeat { return cluster.Heartbeat{Node: id, Held: h} }
	want := map[string]Stored{"count": {KeyGroups: []int{0, 1, 2, 3, 4, 5, 6, 7}, OtherBytes: 300}, "sum": {KeyGroups: []int{0, 7}}}
	for _, tc := range []struct {
		name  string
		want  map[string]Stored
		nodes []cluster.Heartbeat
		miss  []string
	}{
		{"every group and byte on the node that wrote it", want, []cluster.Heartbeat{
			node("n1", hs("j", "count", 5, 100, [2]int{0, 2}), hs("j", "sum", 5, 0, [2]int{0, 0})),
			node("n2", hs("j", "count", 5, 100, [2]int{3, 5})),
			node("n3", hs("j", "count", 5, 100, [2]int{6, 7}), hs("j", "sum", 5, 0, [2]int{7, 7}))}, nil},
		{"a holder not back yet", want, []cluster.Heartbeat{
			node("n1", hs("j", "count", 5, 100, [2]int{0, 2}), hs("j", "sum", 5, 0, [2]int{0, 0})),
			node("n3", hs("j", "count", 5, 100, [2]int{6, 7}), hs("j", "sum", 5, 0, [2]int{7, 7}))},
			[]string{"count/3", "count/4", "count/5", "count: 200 of 300 bytes of operator and channel state"}},
		// An instance that had no key group yet: its channel state alone
		// tells that its node is not back.
		{"only channel state of an instance missing", want, []cluster.Heartbeat{
			node("n1", hs("j", "count", 100, 100, [2]int{0, 7}), hs("j", "count", 5, 100, [2]int{0, 7}), hs("j", "sum", 5, 0, [2]int{0, 7})),
			node("n2", hs("j", "count", 5, 100))},
			[]string{"count: 200 of 300 bytes of operator and channel state"}},
		{"held at another checkpoint, job or operator", want, []cluster.Heartbeat{
			node("n1", hs("j", "count", 4, 300, [2]int{0, 7}), hs("other", "sum", 5, 0, [2]int{0, 7}), hs("j", "sum", 5, 300, [2]int{1, 6})),
			node("n2", hs("j", "count", 5, 0, [2]int{0, 6}))},
			[]string{"count/7", "count: 0 of 300 bytes of operator and channel state", "sum/0", "sum/7"}},
		{"twice held is held", map[string]Stored{"count": {KeyGroups: []int{0, 1}}}, []cluster.Heartbeat{
			node("n1", hs("j", "count", 5, 0, [2]int{0, 1})), node("n2", hs("j", "count", 5, 0, [2]int{0, 1}))}, nil},
		{"no nodes", map[string]Stored{"count": {KeyGroups: []int{0}}}, nil, []string{"count/0"}},
		{"only operator state, all held", map[string]Stored{"src": {OtherBytes: 40}}, []cluster.Heartbeat{
			node("n1", cluster.HeldState{Job: "j", Operator: "src", Checkpoint: 5, Bytes: 40})}, nil},
		{"nothing stored", map[string]Stored{}, []cluster.Heartbeat{node("n1", hs("j", "count", 5, 0, [2]int{0, 7}))},
			[]string{"nothing stored"}},
		{"an operator storing nothing", map[string]Stored{"count": {}}, []cluster.Heartbeat{node("n1")}, []string{"nothing stored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MissingHeld("j", 5, tc.want, tc.nodes); !slices.Equal(got, tc.miss) {
				t.Fatalf("MissingHeld = %q, want %q", got, tc.miss)
			}
		})
	}
}
