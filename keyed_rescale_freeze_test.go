package weir

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// TestKeyedGroupsFreezeForHandoff: instance 0 freezes a key group it holds
// state of; from then on it refuses the group's records (its frozen state is
// never written again here), keeps counting its other groups, the frozen
// view encodes to what ExportGroups gives, Drop empties the group, and the
// new owner counts on from the encoded state.
func TestKeyedGroupsFreezeForHandoff(t *testing.T) {
	g := NewGraph("freezer")
	counts := NewValueState[int64](g, "count")
	last := map[string]int64{}
	out := Process(KeyBy(Generate(g, "source", 1, func(i int64) string { return "k" }), func(s string) string { return s }), "count",
		func(ctx *KeyedContext[string], k string, out *Emitter[int64]) error {
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			last[k] = c
			return nil
		}, WithState(counts), Parallelism(1))
	ToSink(out, "sink", DiscardSink[int64](nil))
	p, err := g.plan()
	if err != nil {
		t.Fatal(err)
	}
	op := p.Operators[1]
	tab, _ := keygroups.Contiguous(p.MaxParallelism, 1)
	// Two keys of different groups: "k" moves, the other stays.
	moving := keygroups.KeyGroup("k", p.MaxParallelism)
	stay := ""
	for i := 0; stay == ""; i++ {
		if k := string(rune('a'+i%26)) + strings.Repeat("x", i/26); keygroups.KeyGroup(k, p.MaxParallelism) != moving {
			stay = k
		}
	}
	insts := make([]*keyedInstance[string, string, int64], 2)
	for i := range insts {
		inst, err := op.New(0)
		if err != nil {
			t.Fatal(err)
		}
		if err := inst.Open(plan.TaskInfo{Job: "freezer", Operator: "count", Instance: 0, Parallelism: 1, MaxParallelism: p.MaxParallelism, Table: tab}); err != nil {
			t.Fatal(err)
		}
		insts[i] = inst.(*keyedInstance[string, string, int64])
	}
	w, err := op.Outputs[0].NewWriter(plan.WriterConfig{Edge: op.Outputs[0], Instance: 0, Channels: 1, MaxParallelism: p.MaxParallelism,
		BatchSize: 16, Seal: func(int, plan.Batch) {}})
	if err != nil {
		t.Fatal(err)
	}
	o := moverOutput{ws: []plan.EdgeWriter{w}}
	from, twin := insts[0], insts[1] // twin: the same records, exported the old way
	for _, inst := range insts {
		if err := inst.Process(0, plan.Records[string]{"k", "k", stay}, o); err != nil {
			t.Fatal(err)
		}
	}
	want, err := twin.ExportGroups([]int{moving})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := from.FreezeGroups([]int{moving, moving + 200}); err == nil || !strings.Contains(err.Error(), "which it does not own") {
		t.Fatalf("freeze of a group out of range: %v", err)
	}
	frozen, err := from.FreezeGroups([]int{moving})
	if err != nil {
		t.Fatal(err)
	}
	if err := from.Process(0, plan.Records[string]{"k"}, o); err == nil || !strings.Contains(err.Error(), "which it does not own") {
		t.Fatalf("a record of the frozen group at its old owner: %v", err)
	}
	if err := from.Process(0, plan.Records[string]{stay}, o); err != nil {
		t.Fatalf("a record of a group that stays, while the other is frozen: %v", err)
	}
	if last[stay] != 2 {
		t.Fatalf("count of the staying key %d, want 2", last[stay])
	}
	blobs, err := frozen.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) != 1 || !bytes.Equal(blobs[moving], want[moving]) {
		t.Fatalf("frozen group encoded to %d blobs, not the %d bytes ExportGroups gives", len(blobs), len(want[moving]))
	}
	frozen.Drop()
	if n := from.backend.GroupLen(moving); n != 0 {
		t.Fatalf("the dropped group still holds %d entries", n)
	}
	if _, err := from.FreezeGroups([]int{moving}); err == nil || !strings.Contains(err.Error(), "which it does not own") {
		t.Fatalf("a second freeze: %v", err)
	}
	// The new owner: the twin after dropping its own export.
	if err := twin.ImportGroups([]int{moving}, blobs); err != nil {
		t.Fatal(err)
	}
	if err := twin.Process(0, plan.Records[string]{"k"}, o); err != nil {
		t.Fatal(err)
	}
	if last["k"] != 3 {
		t.Fatalf("count after the move %d, want 3 (2 before it, 1 after)", last["k"])
	}
}
