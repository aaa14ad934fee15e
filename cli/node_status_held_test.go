package cli

import (
	"encoding/json"
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

// TestStatusPrintsRestores: `node status` prints, per node, a line per job
// it restored tasks of, and --json carries the same figures; a node that
// restored nothing gets no line.
func TestStatusPrintsRestores(t *testing.T) {
	st := &clusterStatus{Nodes: []nodeStatus{
		{MemberStatus: node.MemberStatus{Node: "n1"}, Answered: true},
		{MemberStatus: node.MemberStatus{Node: "n3"}, Answered: true, Restored: []cluster.RestoredState{
			{Job: "keycount", Restores: 5, LocalBytes: 1009311, LocalSections: 14, TookMs: 12.3, SpanMs: 7.2, Decoded: 5, DecodedMs: 30.4, DecodedSpanMs: 9.6},
			{Job: "wordcount", Restores: 2, LocalBytes: 10, LocalSections: 1, RemoteBytes: 2048, RemoteSections: 3, TookMs: 40.6, SpanMs: 25, Decoded: 1, DecodedMs: 50, DecodedSpanMs: 30},
		}},
	}}
	var b strings.Builder
	if err := writeStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"restores on n3: job keycount: 5 task restores, 1009311 bytes local (14 sections), 0 bytes remote (0 sections), 12 ms summed over tasks, all running in 7 ms, all key groups decoded in 10 ms (30 ms summed over tasks)\n",
		"restores on n3: job wordcount: 2 task restores, 10 bytes local (1 sections), 2048 bytes remote (3 sections), 41 ms summed over tasks, all running in 25 ms, 1 of 2 with every key group decoded\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("status output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "restores on n1") {
		t.Fatalf("a node that restored nothing has a restores line:\n%s", out)
	}
	j, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `"restores":[{"job":"keycount","task_restores":5,"local_bytes":1009311,"remote_bytes":0,"local_sections":14,"remote_sections":0,"took_ms":12.3,"span_ms":7.2,"decoded_restores":5,"decoded_ms":30.4,"decoded_span_ms":9.6}`
	if !strings.Contains(string(j), want) {
		t.Fatalf("status JSON lacks %s:\n%s", want, j)
	}
}
