package actors

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/store"
)

// restorePlanJob is source(p) →hash→ count(p, keyed) →implicit→ sink(1),
// validated (so count has its first table).
func restorePlanJob(t *testing.T, p int) *plan.Job {
	t.Helper()
	src := &plan.Operator{ID: 0, Name: "source", Kind: plan.KindSource, Parallelism: p}
	cnt := &plan.Operator{ID: 1, Name: "count", Kind: plan.KindTransform, Parallelism: p, Keyed: true}
	snk := &plan.Operator{ID: 2, Name: "sink", Kind: plan.KindSink, Parallelism: 1}
	writer := func(cfg plan.WriterConfig) (plan.EdgeWriter, error) {
		return plan.NewWriter(cfg, func(v any) uint32 { return keygroups.HashKey(v.(string)) }, nil)
	}
	hash := func(v string) uint32 { return keygroups.HashKey(v) }
	groups := func(max int) (plan.RecordGroups, error) { return inflight.RecordsOf(hash, max) }
	e0 := &plan.Edge{ID: 0, From: src, To: cnt, Partitioner: plan.KeyGroupHash, NewWriter: writer, Groups: groups}
	e1 := &plan.Edge{ID: 1, From: cnt, To: snk, Partitioner: plan.ImplicitPartitioner(p, 1), Implicit: true, NewWriter: writer}
	src.Outputs, cnt.Inputs, cnt.Outputs, snk.Inputs = []*plan.Edge{e0}, []*plan.Edge{e0}, []*plan.Edge{e1}, []*plan.Edge{e1}
	j := &plan.Job{Name: "kc", MaxParallelism: 16, Operators: []*plan.Operator{src, cnt, snk}, Edges: []*plan.Edge{e0, e1}}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	return j
}

// manifestOf is the manifest a run of j writes: its parallelisms, tables and
// fingerprint, one task entry per instance, each keyed task holding its
// groups' sections in its own blob and the sink holding operator state.
func manifestOf(j *plan.Job) *store.Manifest {
	m := &store.Manifest{Job: j.Name, CheckpointID: 7, Fingerprint: j.Fingerprint(), MaxParallelism: j.MaxParallelism,
		Parallelism: map[string]int{}, KeyGroups: map[string][]int32{}, KeyGroupEpochs: map[string]uint64{}}
	for _, op := range j.Operators {
		m.Parallelism[op.Name] = op.Parallelism
		if op.Table != nil {
			m.KeyGroups[op.Name] = op.Table.Owners
			m.KeyGroupEpochs[op.Name] = op.Table.Epoch
		}
		for i := 0; i < op.Parallelism; i++ {
			ts := store.TaskSnapshot{Operator: op.Name, Instance: i, SourceOffset: -1}
			if op.Kind == plan.KindSink {
				ts.OperatorState = &store.BlobRef{Name: fmt.Sprintf("%s-%d", op.Name, i)}
			}
			if op.Table != nil {
				ts.KeyGroups = map[int]store.BlobRef{}
				for _, g := range op.Table.GroupsOf(i) {
					ts.KeyGroups[g] = store.BlobRef{Name: fmt.Sprintf("%s-%d", op.Name, i), Offset: int64(g)}
				}
			}
			m.Tasks = append(m.Tasks, ts)
		}
	}
	return m
}

// TestPlanRestoreRescalesTablesAndPinsSources: restoring a checkpoint taken at
// parallelism 2 into a plan at M gives count the checkpoint's table rescaled
// to M (epoch+1, the minimum moved), keeps the source at 2, and re-chooses
// the implicit partitioner; applying it makes the plan restorable and valid.
func TestPlanRestoreRescalesTablesAndPinsSources(t *testing.T) {
	for _, m := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprintf("2→%d", m), func(t *testing.T) {
			man := manifestOf(restorePlanJob(t, 2))
			j := restorePlanJob(t, m)
			rp, err := PlanRestore(j, man)
			if err != nil {
				t.Fatal(err)
			}
			old, _ := keygroups.Contiguous(16, 2)
			want, moves, _ := old.Rescale(m)
			src, cnt := rp.Operators[0], rp.Operators[1]
			if src.To != 2 || src.Pinned != (m != 2) {
				t.Fatalf("source: %+v, want kept at 2", src)
			}
			if cnt.From != 2 || cnt.To != m {
				t.Fatalf("count: %d→%d, want 2→%d", cnt.From, cnt.To, m)
			}
			if m == 2 {
				if !cnt.Table.Equal(old) || cnt.Table.Epoch != 0 {
					t.Fatalf("same parallelism: table %+v, want the manifest's", cnt.Table)
				}
			} else if !cnt.Table.Equal(want) || cnt.Table.Epoch != 1 || cnt.Moved != len(moves) || cnt.Moved != cnt.Minimum {
				t.Fatalf("count: table %v epoch %d moved %d min %d, want %v epoch 1 moved %d", cnt.Table.Owners, cnt.Table.Epoch, cnt.Moved, cnt.Minimum, want.Owners, len(moves))
			}
			if err := CheckRestorable(j, man); m != 2 && err == nil {
				t.Fatal("CheckRestorable accepted the plan before Apply")
			}
			rp.Apply(j)
			if err := CheckRestorable(j, man); err != nil {
				t.Fatalf("after Apply: %v", err)
			}
			if err := j.Validate(); err != nil {
				t.Fatalf("after Apply: %v", err)
			}
			if j.Operators[0].Parallelism != 2 || j.Operators[1].Table != cnt.Table {
				t.Fatal("Apply did not set the source's parallelism and count's table")
			}
			if got, want := j.Edges[1].Partitioner, plan.ImplicitPartitioner(m, 1); got != want {
				t.Fatalf("count→sink partitioner %v, want %v", got, want)
			}
		})
	}
}

// TestPlanRestoreRescalesSplitSources: a source read by splits is not
// pinned: it runs at the plan's parallelism, and the plan is restorable
// after Apply. One without splits stays pinned (TestPlanRestoreRescalesTablesAndPinsSources).
func TestPlanRestoreRescalesSplitSources(t *testing.T) {
	for _, m := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("2→%d", m), func(t *testing.T) {
			man := manifestOf(restorePlanJob(t, 2))
			j := restorePlanJob(t, m)
			j.Operators[0].Splittable = true
			rp, err := PlanRestore(j, man)
			if err != nil {
				t.Fatal(err)
			}
			if src := rp.Operators[0]; src.Pinned || src.From != 2 || src.To != m {
				t.Fatalf("source: %+v, want 2→%d, not pinned", src, m)
			}
			rp.Apply(j)
			if err := CheckRestorable(j, man); err != nil {
				t.Fatalf("after Apply: %v", err)
			}
			if j.Operators[0].Parallelism != m {
				t.Fatalf("source at %d after Apply, want %d", j.Operators[0].Parallelism, m)
			}
		})
	}
}

// TestPlanRestoreAfterRestore: a checkpoint written after a restore at 3
// holds the epoch-1 table; restoring it at 5 rescales that table (epoch 2),
// not the contiguous one, and at 3 keeps it.
func TestPlanRestoreAfterRestore(t *testing.T) {
	j3 := restorePlanJob(t, 3)
	rp, err := PlanRestore(j3, manifestOf(restorePlanJob(t, 2)))
	if err != nil {
		t.Fatal(err)
	}
	rp.Apply(j3)
	man := manifestOf(j3)
	if man.KeyGroupEpochs["count"] != 1 {
		t.Fatalf("manifest after a restore at 3: epoch %d, want 1", man.KeyGroupEpochs["count"])
	}
	for _, m := range []int{3, 5} {
		j := restorePlanJob(t, m)
		rp, err := PlanRestore(j, man)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := j3.Operators[1].Table.Rescale(m)
		wantEpoch := uint64(2)
		if m == 3 {
			want, wantEpoch = j3.Operators[1].Table, 1
		}
		if got := rp.Operators[1].Table; !got.Equal(want) || got.Epoch != wantEpoch {
			t.Fatalf("at %d: table %v epoch %d, want %v epoch %d", m, got.Owners, got.Epoch, want.Owners, wantEpoch)
		}
	}
}

// TestPlanRestoreRefuses: each mismatch is refused with a message that says
// what differs.
func TestPlanRestoreRefuses(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(j *plan.Job, m *store.Manifest)
		wants string
	}{
		{"another job", func(_ *plan.Job, m *store.Manifest) { m.Job = "other" }, `belongs to job "other"`},
		{"another graph", func(_ *plan.Job, m *store.Manifest) { m.Fingerprint = "0000" }, "different graph"},
		{"another maxParallelism", func(_ *plan.Job, m *store.Manifest) { m.MaxParallelism = 32 }, "maxParallelism 32, the job 16"},
		{"operator state at a new parallelism", func(j *plan.Job, m *store.Manifest) {
			m.Tasks[0].OperatorState = &store.BlobRef{Name: "x"} // a source with state: pinned, so fine
			for i := range m.Tasks {
				if m.Tasks[i].Operator == "count" {
					m.Tasks[i].OperatorState = &store.BlobRef{Name: "y"}
				}
			}
		}, `operator "count": instance 0 holds non-keyed operator state`},
		{"corrupt stored table", func(_ *plan.Job, m *store.Manifest) { m.KeyGroups["count"] = []int32{0, 1} }, "stored key-group table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, man := restorePlanJob(t, 3), manifestOf(restorePlanJob(t, 2))
			tc.edit(j, man)
			_, err := PlanRestore(j, man)
			if err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("error %v, want one containing %q", err, tc.wants)
			}
		})
	}
}

// TestKeyGroupSectionsPicksFromEveryOldBlob: an instance of a rescaled
// operator reads each group it now owns from the old task that stored it,
// and no other section; groups without state are left out.
func TestKeyGroupSectionsPicksFromEveryOldBlob(t *testing.T) {
	man := manifestOf(restorePlanJob(t, 3))
	// Group 2 had no state at the checkpoint.
	for i := range man.Tasks {
		delete(man.Tasks[i].KeyGroups, 2)
	}
	old, _ := keygroups.Contiguous(16, 3)
	table, _, _ := old.Rescale(2)
	seen := map[int]bool{}
	for inst := 0; inst < 2; inst++ {
		owned := table.GroupsOf(inst)
		groups, refs := keyGroupSections(man, "count", owned)
		want := slices.DeleteFunc(slices.Clone(owned), func(g int) bool { return g == 2 })
		if !slices.Equal(groups, want) {
			t.Fatalf("instance %d: groups %v, want %v", inst, groups, want)
		}
		for k, g := range groups {
			if wantRef := (store.BlobRef{Name: fmt.Sprintf("count-%d", old.Owner(g)), Offset: int64(g)}); refs[k] != wantRef {
				t.Fatalf("instance %d group %d: section %+v, want %+v", inst, g, refs[k], wantRef)
			}
			if seen[g] {
				t.Fatalf("group %d read by two instances", g)
			}
			seen[g] = true
		}
	}
	if len(seen) != 15 {
		t.Fatalf("%d groups read, want 15 (16 less the one without state)", len(seen))
	}
}

// TestPlanRestoreForwardFromSplitSource: a source read by splits feeding an
// explicit forward edge restores when both ends move to the same new
// parallelism, and is refused, naming the edge, when only one end does; a
// source without splits is refused at any new parallelism of its consumer.
func TestPlanRestoreForwardFromSplitSource(t *testing.T) {
	job := func(src, mp int, splittable bool) *plan.Job {
		s := &plan.Operator{ID: 0, Name: "source", Kind: plan.KindSource, Parallelism: src, Splittable: splittable}
		m := &plan.Operator{ID: 1, Name: "map", Kind: plan.KindTransform, Parallelism: mp}
		k := &plan.Operator{ID: 2, Name: "sink", Kind: plan.KindSink, Parallelism: 1}
		e0 := &plan.Edge{ID: 0, From: s, To: m, Partitioner: plan.Forward}
		e1 := &plan.Edge{ID: 1, From: m, To: k, Partitioner: plan.ImplicitPartitioner(mp, 1), Implicit: true}
		s.Outputs, m.Inputs, m.Outputs, k.Inputs = []*plan.Edge{e0}, []*plan.Edge{e0}, []*plan.Edge{e1}, []*plan.Edge{e1}
		return &plan.Job{Name: "fw", MaxParallelism: 16, Operators: []*plan.Operator{s, m, k}, Edges: []*plan.Edge{e0, e1}}
	}
	tests := []struct {
		name       string
		src, mp    int
		splittable bool
		wants      string // "" for restorable
	}{
		{"split source and map to 3", 3, 3, true, ""},
		{"split source and map to 1", 1, 1, true, ""},
		{"split source alone to 3", 3, 2, true, `edge source → map is forward, and "source" resumes at parallelism 3`},
		{"map alone to 3", 2, 3, true, `edge source → map is forward, and "source" resumes at parallelism 2`},
		{"source without splits and map to 3", 3, 3, false, `edge source → map is forward, and "source" resumes at parallelism 2 (a source without splits keeps the checkpoint's) while "map" runs at 3`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			man := manifestOf(job(2, 2, tc.splittable))
			j := job(tc.src, tc.mp, tc.splittable)
			rp, err := PlanRestore(j, man)
			if tc.wants == "" {
				if err != nil {
					t.Fatal(err)
				}
				rp.Apply(j)
				if err := CheckRestorable(j, man); err != nil {
					t.Fatalf("after Apply: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("error %v, want one containing %q", err, tc.wants)
			}
		})
	}
}

// TestPlanRestoreSinkStateGrowsOnly: a sink's operator state is each
// instance's own uncommitted output, so a checkpoint with the sink at 2
// restores it at 3 (instances 0 and 1 recover theirs, 2 starts empty) but
// not at 1, where instance 1's output would be left uncommitted.
func TestPlanRestoreSinkStateGrowsOnly(t *testing.T) {
	withSink := func(p int) *plan.Job {
		j := restorePlanJob(t, 2)
		j.Operators[2].Parallelism = p
		j.Edges[1].Partitioner = plan.ImplicitPartitioner(2, p)
		return j
	}
	man := manifestOf(withSink(2))
	rp, err := PlanRestore(withSink(3), man)
	if err != nil {
		t.Fatalf("sink 2 → 3: %v", err)
	}
	if o := rp.Operators[2]; o.From != 2 || o.To != 3 {
		t.Fatalf("sink restore %+v, want from 2 to 3", o)
	}
	_, err = PlanRestore(withSink(1), man)
	if want := `operator "sink": instance 0 holds non-keyed operator state, which cannot be split: restore it at parallelism 2, not 1`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("sink 2 → 1: error %v, want one containing %q", err, want)
	}
}
