package weir

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// lazyCountOp is an instance of a keyed count over string keys whose state
// is a ValueState of type T named "count", ready to process.
func lazyCountOp[T any](t *testing.T, count func(T) T) (plan.Instance, moverOutput, int) {
	t.Helper()
	g := NewGraph("lazy")
	counts := NewValueState[T](g, "count")
	out := Process(KeyBy(Generate(g, "source", 1, func(i int64) string { return "k" }), func(s string) string { return s }), "count",
		func(ctx *KeyedContext[string], k string, out *Emitter[int64]) error {
			counts.Set(ctx, count(counts.Get(ctx)))
			return nil
		}, WithState(counts), Parallelism(1))
	ToSink(out, "sink", DiscardSink[int64](nil))
	p, err := g.plan()
	if err != nil {
		t.Fatal(err)
	}
	op := p.Operators[1]
	tab, _ := keygroups.Contiguous(p.MaxParallelism, 1)
	inst, err := op.New(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Open(plan.TaskInfo{Job: "lazy", Operator: "count", Instance: 0, Parallelism: 1, MaxParallelism: p.MaxParallelism, Table: tab}); err != nil {
		t.Fatal(err)
	}
	w, err := op.Outputs[0].NewWriter(plan.WriterConfig{Edge: op.Outputs[0], Instance: 0, Channels: 1, MaxParallelism: p.MaxParallelism,
		BatchSize: 16, Seal: func(int, plan.Batch) {}})
	if err != nil {
		t.Fatal(err)
	}
	return inst, moverOutput{ws: []plan.EdgeWriter{w}}, p.MaxParallelism
}

// lazyCountSnapshot counts keys k0..k49 (k0 three times) and returns the
// snapshot, as a restore hands it over (adopted).
func lazyCountSnapshot(t *testing.T) plan.Snapshot {
	t.Helper()
	inst, o, _ := lazyCountOp(t, func(c int64) int64 { return c + 1 })
	var recs plan.Records[string]
	for i := range 50 {
		recs = append(recs, fmt.Sprintf("k%d", i))
	}
	recs = append(recs, "k0", "k0")
	if err := inst.(plan.Transform).Process(0, recs, o); err != nil {
		t.Fatal(err)
	}
	snap, err := inst.(plan.Stateful).SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	snap.KeyGroupsAdopted = true
	return snap
}

// TestKeyedRestoreProcessesBeforeEveryGroupIsDecoded: a restored keyed
// instance processes a record of one key group while its other groups stay
// encoded, from the restored state; the rest decode in the background and
// the state is the restored one.
func TestKeyedRestoreProcessesBeforeEveryGroupIsDecoded(t *testing.T) {
	snap := lazyCountSnapshot(t)
	inst, o, maxP := lazyCountOp(t, func(c int64) int64 { return c + 1 })
	if err := inst.(plan.Stateful).RestoreState(snap); err != nil {
		t.Fatal(err)
	}
	lr := inst.(plan.LazyRestoring).LazyRestore()
	if got := lr.Encoded(); got != len(snap.KeyGroups) {
		t.Fatalf("%d key groups encoded after the restore, want all %d", got, len(snap.KeyGroups))
	}
	if err := inst.(plan.Transform).Process(0, plan.Records[string]{"k0"}, o); err != nil {
		t.Fatal(err)
	}
	if got := lr.Encoded(); got != len(snap.KeyGroups)-1 {
		t.Fatalf("%d key groups encoded after a record of k0, want %d: only k0's group is decoded", got, len(snap.KeyGroups)-1)
	}
	done := make(chan struct{})
	if !lr.DecodeInBackground(func() { close(done) }) {
		t.Fatal("nothing to decode in the background")
	}
	<-done
	if err := lr.InstallDecoded(); err != nil {
		t.Fatal(err)
	}
	ki := inst.(*keyedInstance[string, string, int64])
	counts := ki.backend.Table(0)
	for i := range 50 {
		k := fmt.Sprintf("k%d", i)
		want := int64(1)
		if i == 0 {
			want = 4 // three before the checkpoint, one after the restore
		}
		g := keygroups.KeyGroup(k, maxP)
		v, ok := counts.(interface {
			Get(int, string) (int64, bool)
		}).Get(g, k)
		if !ok || v != want {
			t.Fatalf("%s = %d, %v after the restore; want %d", k, v, ok, want)
		}
	}
	if err := inst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKeyedRestoreDecodeErrorNamesTheGroup: state that passes every check
// of a restore but does not decode into the operator's state type (the
// type changed between runs) fails the record that first needs its group,
// with an error naming the operator, the key group and the state; records
// of other groups are processed meanwhile.
func TestKeyedRestoreDecodeErrorNamesTheGroup(t *testing.T) {
	snap := lazyCountSnapshot(t)
	inst, o, maxP := lazyCountOp(t, func(s string) string { return s + "+" }) // was int64
	if err := inst.(plan.Stateful).RestoreState(snap); err != nil {
		t.Fatalf("restore: %v (want the restore to run and the group that first needs decoding to fail)", err)
	}
	defer inst.Close()
	err := inst.(plan.Transform).Process(0, plan.Records[string]{"k1"}, o)
	want := fmt.Sprintf(`key group %d table "count"`, keygroups.KeyGroup("k1", maxP))
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `operator "count"`) {
		t.Fatalf("record of k1: error %v, want one naming operator \"count\" and %s", err, want)
	}
}
