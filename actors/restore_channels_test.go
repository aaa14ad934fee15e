package actors

import (
	"testing"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
)

// TestChannelOfAndInputOf: a task numbers its input channels edge by edge,
// producer by producer; channelOf and inputOf convert both ways and refuse
// an index past the last channel.
func TestChannelOfAndInputOf(t *testing.T) {
	producers := []int{2, 3, 1}
	want := [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, 2}, {2, 0}}
	for input, w := range want {
		e, j, ok := channelOf(input, producers)
		if !ok || e != w[0] || j != w[1] {
			t.Fatalf("channelOf(%d) = %d, %d, %t; want %v", input, e, j, ok, w)
		}
		if got := inputOf(e, j, producers); got != input {
			t.Fatalf("inputOf(%d, %d) = %d, want %d", e, j, got, input)
		}
	}
	for _, bad := range []int{-1, 6} {
		if _, _, ok := channelOf(bad, producers); ok {
			t.Fatalf("channelOf(%d) accepted", bad)
		}
	}
}

// TestRedistributionSpecFromCheckpointToPlan: the spec describes count's
// channels as the checkpoint had them (parallelism 2, its stored table) and
// as the plan has them after a restore at 3; the sink's implicit edge, which
// was rebalance at 2 → 1 and is forward at 1 → 1 after a restore at 1, keeps
// the checkpoint's partitioner, and a forward edge whose parallelisms change
// moves batches as rebalance does.
func TestRedistributionSpecFromCheckpointToPlan(t *testing.T) {
	man := manifestOf(restorePlanJob(t, 2))
	for _, m := range []int{1, 3} {
		j := restorePlanJob(t, m)
		rp, err := PlanRestore(j, man)
		if err != nil {
			t.Fatal(err)
		}
		rp.Apply(j)
		cnt, snk := j.Operators[1], j.Operators[2]

		spec, err := redistributionSpec(j, man, cnt)
		if err != nil {
			t.Fatal(err)
		}
		in := spec.Inputs[0]
		if spec.OldParallelism != 2 || spec.NewParallelism != m || in.OldProducers != 2 || in.NewProducers != 2 ||
			in.Partitioner != plan.KeyGroupHash || in.Records == nil {
			t.Fatalf("count at %d: spec %+v", m, spec)
		}
		if spec.NewTable != cnt.Table || spec.OldTable.Epoch != 0 || spec.OldTable.Parallelism != 2 {
			t.Fatalf("count at %d: tables old %+v new %+v", m, spec.OldTable, spec.NewTable)
		}

		spec, err = redistributionSpec(j, man, snk)
		if err != nil {
			t.Fatal(err)
		}
		in = spec.Inputs[0]
		if in.Partitioner != plan.Rebalance || in.OldProducers != 2 || in.NewProducers != m || spec.OldTable != nil {
			t.Fatalf("sink with count at %d: spec %+v", m, spec)
		}
	}

	// An implicit edge that was forward (2 → 2) and no longer is.
	j := restorePlanJob(t, 2)
	j.Operators[2].Parallelism = 2
	j.Edges[1].Partitioner = plan.Forward
	man = manifestOf(j)
	j.Operators[2].Parallelism = 3
	spec, err := redistributionSpec(j, man, j.Operators[2])
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Inputs[0].Partitioner; got != plan.Rebalance {
		t.Fatalf("forward edge 2→2 restored at 2→3: partitioner %v, want rebalance", got)
	}
	if _, err := inflight.Redistribute(spec, []inflight.Channel{{Input: 0, Producer: 1, Consumer: 1}}); err != nil {
		t.Fatalf("spec refused by Redistribute: %v", err)
	}
}
