package weir

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// moverOutput is the plan.Output of one test instance: one writer, batches
// dropped.
type moverOutput struct{ ws []plan.EdgeWriter }

func (o moverOutput) Writers() []plan.EdgeWriter { return o.ws }

// TestKeyedGroupsMoveBetweenInstances: instance 0 of a keyed count exports a
// key group with its state; instance 1 imports it and counts on from there;
// instance 0 refuses the group's records from then on; bad moves are refused.
func TestKeyedGroupsMoveBetweenInstances(t *testing.T) {
	g := NewGraph("mover")
	counts := NewValueState[int64](g, "count")
	var seen atomic.Int64
	out := Process(KeyBy(Generate(g, "source", 1, func(i int64) string { return "k" }), func(s string) string { return s }), "count",
		func(ctx *KeyedContext[string], k string, out *Emitter[int64]) error {
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(c)
			seen.Store(c)
			return nil
		}, WithState(counts), Parallelism(2))
	ToSink(out, "sink", DiscardSink[int64](nil))
	p, err := g.plan()
	if err != nil {
		t.Fatal(err)
	}
	op := p.Operators[1]
	tab, _ := keygroups.Contiguous(p.MaxParallelism, 2)
	group := int(keygroups.HashKey("k") % uint32(p.MaxParallelism))
	owner := tab.Owner(group)
	insts := make([]*keyedInstance[string, string, int64], 2)
	outs := make([]moverOutput, 2)
	for i := range insts {
		inst, err := op.New(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := inst.Open(plan.TaskInfo{Job: "mover", Operator: "count", Instance: i, Parallelism: 2, MaxParallelism: p.MaxParallelism, Table: tab}); err != nil {
			t.Fatal(err)
		}
		insts[i] = inst.(*keyedInstance[string, string, int64])
		w, err := op.Outputs[0].NewWriter(plan.WriterConfig{Edge: op.Outputs[0], Instance: i, Channels: 1, MaxParallelism: p.MaxParallelism,
			BatchSize: 16, Seal: func(int, plan.Batch) {}})
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = moverOutput{ws: []plan.EdgeWriter{w}}
	}
	from, to := insts[owner], insts[1-owner]
	for range 3 {
		if err := from.Process(0, plan.Records[string]{"k"}, outs[owner]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := to.ExportGroups([]int{group}); err == nil || !strings.Contains(err.Error(), "which it does not own") {
		t.Fatalf("export by the non-owner: %v", err)
	}
	blobs, err := from.ExportGroups([]int{group})
	if err != nil || len(blobs[group]) == 0 {
		t.Fatalf("export: %v, %d bytes", err, len(blobs[group]))
	}
	if err := from.Process(0, plan.Records[string]{"k"}, outs[owner]); err == nil || !strings.Contains(err.Error(), "which it does not own") {
		t.Fatalf("a record of the exported group at the old owner: %v", err)
	}
	if err := to.ImportGroups([]int{group + 1}, blobs); err == nil || !strings.Contains(err.Error(), "not among those handed off") {
		t.Fatalf("import of a blob not listed: %v", err)
	}
	if err := to.ImportGroups([]int{group}, blobs); err != nil {
		t.Fatal(err)
	}
	if err := to.Process(0, plan.Records[string]{"k"}, outs[1-owner]); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 4 {
		t.Fatalf("count after the move %d, want 4 (3 before it, 1 after)", seen.Load())
	}
	if err := to.ImportGroups([]int{group}, blobs); err == nil || !strings.Contains(err.Error(), "holds state here already") {
		t.Fatalf("a second import: %v", err)
	}
}
