package weir

import (
	"testing"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// testOutput collects what an instance emits, one record per batch.
type testOutput[T any] struct {
	ws  []plan.EdgeWriter
	got []T
}

func newTestOutput[T any](t *testing.T) *testOutput[T] {
	o := &testOutput[T]{}
	from, to := &plan.Operator{Name: "op"}, &plan.Operator{Name: "next"}
	w, err := plan.NewWriter[T](plan.WriterConfig{Edge: &plan.Edge{From: from, To: to, Partitioner: plan.Forward}, Channels: 1,
		MaxParallelism: 8, BatchSize: 1, Seal: func(_ int, b plan.Batch) {
			recs, _ := plan.RecordsOf[T](b)
			o.got = append(o.got, recs...)
		}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.ws = []plan.EdgeWriter{w}
	return o
}

func (o *testOutput[T]) Writers() []plan.EdgeWriter { return o.ws }

// windowInstance makes instance i of p of a tumbling 10 s count over
// (key, second) pairs, opened on a job of 8 key groups.
func windowInstance(t *testing.T, i, p int) (plan.Instance, *LateRecords[[2]int64]) {
	t.Helper()
	g := NewGraph("restore-floor", WithMaxParallelism(8))
	src := Generate(g, "src", 0, func(int64) [2]int64 { return [2]int64{} })
	timed := Timestamped(src, func(r [2]int64) time.Time { return time.Unix(r[1], 0) })
	w := Window(KeyBy(timed, func(r [2]int64) int64 { return r[0] }), Tumbling(10*time.Second))
	ToSink(Aggregate(w, "count", Count[[2]int64](), Parallelism(p)), "sink", DiscardSink[WindowResult[int64, int64]](nil))
	op := g.job.Operators[1]
	inst, err := op.New(i)
	if err != nil {
		t.Fatal(err)
	}
	table, err := keygroups.Contiguous(8, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Open(plan.TaskInfo{Operator: "count", Instance: i, Parallelism: p, MaxParallelism: 8,
		Table: table, KeyGroups: table.GroupsOf(i)}); err != nil {
		t.Fatal(err)
	}
	return inst, w.Late()
}

// TestWindowRestoreKeepsWatermarkPerKeyGroup: a window operator checkpointed
// at watermark 25 s and restored at another parallelism resumes at that
// watermark in every key group it takes over: a record at 15 s (its window
// ended before the checkpoint's watermark) is late after the restore, as it
// would have been without one; the watermark it forwards does not go back;
// the window the checkpoint held open fires once with its count.
func TestWindowRestoreKeepsWatermarkPerKeyGroup(t *testing.T) {
	sec := func(s int64) int64 { return time.Unix(s, 0).UnixNano() }
	before, _ := windowInstance(t, 0, 1)
	out := newTestOutput[WindowResult[int64, int64]](t)
	tr := before.(plan.Transform)
	if err := tr.Process(0, plan.Records[[2]int64]{{1, 3}, {2, 12}, {1, 21}, {3, 24}}, out); err != nil {
		t.Fatal(err)
	}
	if _, err := before.(plan.EventTimeOperator).OnWatermark(sec(25), out); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 2 { // [0,10) of key 1 and [10,20) of key 2
		t.Fatalf("fired %v before the checkpoint, want 2 windows", out.got)
	}
	snap, err := before.(plan.Stateful).SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	// Restore at parallelism 2: each instance takes its key groups.
	fired, lateTotal := 0, 0
	for i := range 2 {
		inst, late := windowInstance(t, i, 2)
		table, _ := keygroups.Contiguous(8, 2)
		mine := plan.Snapshot{CheckpointID: 1, KeyGroups: map[int][]byte{}}
		for _, g := range table.GroupsOf(i) {
			if blob, ok := snap.KeyGroups[g]; ok {
				mine.KeyGroups[g] = blob
			}
		}
		if err := inst.(plan.Stateful).RestoreState(mine); err != nil {
			t.Fatal(err)
		}
		o := newTestOutput[WindowResult[int64, int64]](t)
		// Before any watermark reaches the restored instance, a record of
		// an expired window is late, for each key the instance owns.
		var recs plan.Records[[2]int64]
		for key := int64(1); key <= 3; key++ {
			if int(table.Owners[keygroups.HashKey(key)%8]) == i {
				recs = append(recs, [2]int64{key, 15})
			}
		}
		if err := inst.(plan.Transform).Process(0, recs, o); err != nil {
			t.Fatal(err)
		}
		if late.Dropped() != int64(len(recs)) {
			t.Fatalf("instance %d: %d late records, want %d", i, late.Dropped(), len(recs))
		}
		lateTotal += len(recs)
		wm, err := inst.(plan.EventTimeOperator).OnWatermark(sec(0), o)
		if err != nil {
			t.Fatal(err)
		}
		if wm < sec(25) {
			t.Fatalf("instance %d forwards watermark %v after the restore, below the checkpoint's 25 s", i, time.Unix(0, wm))
		}
		if _, err := inst.(plan.EventTimeOperator).OnWatermark(plan.MaxWatermark, o); err != nil {
			t.Fatal(err)
		}
		fired += len(o.got)
		for _, r := range o.got {
			if r.Start.Unix() != 20 || r.Value != 1 {
				t.Fatalf("instance %d fired %+v, want the open [20,30) windows with one record each", i, r)
			}
		}
	}
	if lateTotal != 3 {
		t.Fatalf("%d late records, want 3", lateTotal)
	}
	if fired != 2 { // [20,30) of keys 1 and 3
		t.Fatalf("%d windows fired after the restore, want 2", fired)
	}
}

// TestWindowRestoreMergesKeyGroupsOfDifferentWatermarks: two instances
// checkpointed at different watermarks (25 s and 45 s) restored as one: the
// instance resumes at the lower, and a record at 35 s is late exactly for
// the keys whose key group came from the instance that was at 45 s.
func TestWindowRestoreMergesKeyGroupsOfDifferentWatermarks(t *testing.T) {
	sec := func(s int64) int64 { return time.Unix(s, 0).UnixNano() }
	table2, _ := keygroups.Contiguous(8, 2)
	owner := func(key int64) int { return int(table2.Owners[keygroups.HashKey(key)%8]) }
	merged := plan.Snapshot{CheckpointID: 1, KeyGroups: map[int][]byte{}}
	wms := []int64{sec(25), sec(45)}
	for i := range 2 {
		inst, _ := windowInstance(t, i, 2)
		out := newTestOutput[WindowResult[int64, int64]](t)
		if _, err := inst.(plan.EventTimeOperator).OnWatermark(wms[i], out); err != nil {
			t.Fatal(err)
		}
		snap, err := inst.(plan.Stateful).SnapshotState(1)
		if err != nil {
			t.Fatal(err)
		}
		for g, b := range snap.KeyGroups {
			merged.KeyGroups[g] = b
		}
	}
	inst, late := windowInstance(t, 0, 1)
	if err := inst.(plan.Stateful).RestoreState(merged); err != nil {
		t.Fatal(err)
	}
	out := newTestOutput[WindowResult[int64, int64]](t)
	var recs plan.Records[[2]int64]
	wantLate := 0
	for key := int64(1); key <= 40; key++ {
		recs = append(recs, [2]int64{key, 35})
		if owner(key) == 1 {
			wantLate++
		}
	}
	if wantLate == 0 || wantLate == len(recs) {
		t.Fatalf("%d of %d keys in the second instance's key groups: the test needs both", wantLate, len(recs))
	}
	if err := inst.(plan.Transform).Process(0, recs, out); err != nil {
		t.Fatal(err)
	}
	if int(late.Dropped()) != wantLate {
		t.Fatalf("%d late records, want %d (the keys of the key groups checkpointed at 45 s)", late.Dropped(), wantLate)
	}
	wm, err := inst.(plan.EventTimeOperator).OnWatermark(plan.MinWatermark+1, out)
	if err != nil {
		t.Fatal(err)
	}
	if wm != sec(25) {
		t.Fatalf("resumed at watermark %v, want the lower checkpointed one, 25 s", time.Unix(0, wm))
	}
}
