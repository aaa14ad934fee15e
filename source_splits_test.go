package weir

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// offsetSource is a Source without splits (its position is one offset).
type offsetSource struct{ offset int64 }

func (s *offsetSource) Open(TaskInfo) error             { return nil }
func (s *offsetSource) Read([]int64) (int, bool, error) { return 0, true, nil }
func (s *offsetSource) Offset() int64                   { return s.offset }
func (s *offsetSource) SeekTo(o int64) error            { s.offset = o; return nil }
func (s *offsetSource) Close() error                    { return nil }
func discardAll(s Stream[int64], name string, p int) Stream[int64] {
	return Map(s, name, func(i int64) int64 { return i }, Parallelism(p))
}

// twoSourcePlan is a generated source "gen" and a source without splits
// "plain", each at p, each feeding its own map and sink.
func twoSourcePlan(t *testing.T, p int) *plan.Job {
	t.Helper()
	g := NewGraph("sources")
	gen := Generate(g, "gen", 10, func(i int64) int64 { return i }, Parallelism(p))
	plain := FromSource(g, "plain", func(int) Source[int64] { return &offsetSource{} }, Parallelism(p))
	ToSink(discardAll(gen, "gen-map", p), "gen-sink", DiscardSink[int64](nil))
	ToSink(discardAll(plain, "plain-map", p), "plain-sink", DiscardSink[int64](nil))
	j, err := g.plan()
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestRestoreRescalesOnlySplitSources: restoring a checkpoint taken at 2
// at parallelism 3, the generated source runs at 3 and may be named in
// --operator-parallelism; the source without splits keeps 2, and naming it
// is refused, saying why.
func TestRestoreRescalesOnlySplitSources(t *testing.T) {
	j2 := twoSourcePlan(t, 2)
	m := &store.Manifest{Job: j2.Name, CheckpointID: 4, Fingerprint: j2.Fingerprint(), MaxParallelism: j2.MaxParallelism,
		Parallelism: map[string]int{}}
	for _, op := range j2.Operators {
		m.Parallelism[op.Name] = op.Parallelism
		for i := range op.Parallelism {
			ts := store.TaskSnapshot{Operator: op.Name, Instance: i, SourceOffset: -1}
			if op.Kind == plan.KindSource {
				ts.SourceOffset = 3
			}
			m.Tasks = append(m.Tasks, ts)
		}
	}
	rp, err := actors.PlanRestore(twoSourcePlan(t, 3), m)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rp.Operators {
		switch o.Name {
		case "gen":
			if o.Pinned || o.To != 3 {
				t.Fatalf("generated source: %+v, want at 3", o)
			}
		case "plain":
			if !o.Pinned || o.To != 2 {
				t.Fatalf("source without splits: %+v, want pinned at 2", o)
			}
		}
	}
	if err := refusePinnedSources(rp, map[string]int{"gen": 3}, 4); err != nil {
		t.Fatalf("gen=3: %v", err)
	}
	err = refusePinnedSources(rp, map[string]int{"plain": 3}, 4)
	if want := `checkpoint 4 ran source "plain" at parallelism 2: a source resumes only at its checkpoint's parallelism`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("plain=3: %v, want an error saying %q", err, want)
	}
}
