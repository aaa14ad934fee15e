package node

import (
	"reflect"
	"testing"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/rescale"
)

// TestLocalityOf: a live rescale's placement input lists the nodes with
// their free slots (none below zero) and, of the newest checkpoint any node
// holds of the job, each node's key groups with an equal share of their
// bytes; other jobs and older checkpoints are left out.
func TestLocalityOf(t *testing.T) {
	nodes := map[string]cluster.Heartbeat{
		"b": {Node: "b", Slots: 4, Used: 1, Held: []cluster.HeldState{
			{Job: "j", Operator: "count", Checkpoint: 7, KeyGroups: [][2]int{{0, 1}, {5, 5}}, KeyGroupBytes: 300},
			{Job: "j", Operator: "count", Checkpoint: 6, KeyGroups: [][2]int{{2, 2}}, KeyGroupBytes: 50},
			{Job: "other", Operator: "count", Checkpoint: 9, KeyGroups: [][2]int{{3, 3}}, KeyGroupBytes: 50}}},
		"a": {Node: "a", Slots: 2, Used: 3, Held: []cluster.HeldState{
			{Job: "j", Operator: "count", Checkpoint: 7, KeyGroups: [][2]int{{2, 3}}, KeyGroupBytes: 10}}},
	}
	want := rescale.Locality{
		Nodes: []placement.Slot{{Node: "a", Free: 0}, {Node: "b", Free: 3}},
		Copies: []rescale.GroupCopy{{Operator: "count", Group: 2, Node: "a", Bytes: 5}, {Operator: "count", Group: 3, Node: "a", Bytes: 5},
			{Operator: "count", Group: 0, Node: "b", Bytes: 100}, {Operator: "count", Group: 1, Node: "b", Bytes: 100},
			{Operator: "count", Group: 5, Node: "b", Bytes: 100}},
	}
	if got := localityOf("j", nodes); !reflect.DeepEqual(got, want) {
		t.Fatalf("localityOf = %+v\nwant %+v", got, want)
	}
}
