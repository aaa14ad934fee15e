package cli

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/node"
)

// TestStatusPrintsLocalState: `node status` lists each node's local state,
// one line per job, checkpoint and operator with its key-group ranges and
// bytes; a node holding nothing gets no section.
func TestStatusPrintsLocalState(t *testing.T) {
	st := &clusterStatus{Nodes: []nodeStatus{
		{MemberStatus: node.MemberStatus{Node: "n1"}, Answered: true},
		{MemberStatus: node.MemberStatus{Node: "n3"}, Answered: true, Held: []cluster.HeldState{
			{Job: "keycount", Operator: "count", Checkpoint: 7, KeyGroups: [][2]int{{0, 42}, {86, 127}}, KeyGroupBytes: 1000, Bytes: 1200},
			{Job: "keycount", Operator: "sink", Checkpoint: 7, Bytes: 8},
		}},
	}}
	var b strings.Builder
	if err := writeStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"local state of n3:",
		"job keycount checkpoint 7 operator count        key groups 0-42,86-127      1200 bytes",
		"job keycount checkpoint 7 operator sink         key groups none             8 bytes",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("status output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "local state of n1") {
		t.Fatalf("a node holding nothing has a local state section:\n%s", out)
	}
}
