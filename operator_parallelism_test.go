package weir

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// opParallelismGraph is src (2) → keyed count (2) → map (implicit forward) →
// sink (1, implicit rebalance).
func opParallelismGraph(t *testing.T) *plan.Job {
	t.Helper()
	g := NewGraph("opp")
	src := Generate(g, "src", 10, func(i int64) int64 { return i }, Parallelism(2))
	n := NewValueState[int64](g, "n")
	counted := Process(KeyBy(src, func(i int64) int64 { return i % 3 }), "count",
		func(ctx *KeyedContext[int64], i int64, out *Emitter[int64]) error {
			out.Emit(i)
			return nil
		}, WithState(n), Parallelism(2))
	mapped := Map(counted, "map", func(i int64) int64 { return i }, Parallelism(2))
	ToSink(mapped, "sink", DiscardSink[int64](nil))
	p, err := g.plan()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyOperatorParallelism(t *testing.T) {
	p := opParallelismGraph(t)
	if err := applyOperatorParallelism(p, map[string]int{"count": 3, "sink": 2}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range p.Edges {
		got[e.From.Name+"→"+e.To.Name] = e.Partitioner.String()
	}
	for edge, want := range map[string]string{"count→map": "rebalance", "map→sink": "forward"} {
		if got[edge] != want {
			t.Errorf("edge %s is %s, want %s (chosen again from the new parallelisms)", edge, got[edge], want)
		}
	}
	count := p.Operators[1]
	if count.Parallelism != 3 || count.Table == nil || count.Table.Parallelism != 3 || count.Table.Epoch != 0 {
		t.Fatalf("count at %d with table %+v, want 3 with the first table for 3", count.Parallelism, count.Table)
	}

	for _, tc := range []struct {
		set  map[string]int
		want string
	}{
		{map[string]int{"cnt": 3}, `job opp has no operator "cnt" (its operators: src, count, map, sink)`},
		{map[string]int{"count": 0}, `operator "count": parallelism 0 outside 1..128`},
		{map[string]int{"count": 129}, `operator "count": parallelism 129 outside 1..128`},
	} {
		err := applyOperatorParallelism(opParallelismGraph(t), tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("applyOperatorParallelism(%v) = %v, want an error containing %q", tc.set, err, tc.want)
		}
	}
}
