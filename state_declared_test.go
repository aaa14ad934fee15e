package weir_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// TestStateWithoutWithStateNamesStateAndOperator: a keyed function that uses a
// state its operator does not declare fails the run with an error naming the
// state and the operator (before: "index out of range" from inside the
// runtime), and so does a state declared by another operator.
func TestStateWithoutWithStateNamesStateAndOperator(t *testing.T) {
	for _, tc := range []struct {
		name    string
		declare bool // declare the state on another operator
		want    string
	}{
		{"undeclared", false, `operator "count" uses state "n" without declaring it`},
		{"declared elsewhere", true, `operator "count" uses state "n", which operator "other" declares`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := weir.NewGraph("undeclared", weir.WithParallelism(2))
			src := weir.Generate(g, "source", 100, func(i int64) int64 { return i })
			n := weir.NewValueState[int64]("n")
			keyed := weir.KeyBy(src, func(v int64) int64 { return v % 10 })
			if tc.declare {
				other := weir.Process(keyed, "other", func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error {
					out.Emit(v)
					return nil
				}, weir.WithState(n))
				weir.ToSink(other, "other-sink", weir.DiscardSink[int64](nil))
			}
			counts := weir.Process(keyed, "count", func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error {
				c := n.Get(ctx) + 1
				n.Set(ctx, c)
				out.Emit(c)
				return nil
			})
			weir.ToSink(counts, "sink", weir.DiscardSink[int64](nil))
			_, err := weir.Run(context.Background(), g)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run error %v, want one saying %s", err, tc.want)
			}
		})
	}
}

// TestGraphParallelismIsTheDefault: WithParallelism sets every operator's
// parallelism; an operator's Parallelism option overrides it.
func TestGraphParallelismIsTheDefault(t *testing.T) {
	g := weir.NewGraph("defaults", weir.WithParallelism(4))
	src := weir.Generate(g, "source", 10, func(i int64) int64 { return i })
	doubled := weir.Map(src, "double", func(v int64) int64 { return 2 * v }, weir.Parallelism(3))
	weir.ToSink(doubled, "sink", weir.DiscardSink[int64](nil), weir.Parallelism(1))
	want := map[string]int{"source": 4, "double": 3, "sink": 1}
	for op, p := range g.Parallelisms() {
		if p != want[op] {
			t.Errorf("operator %s parallelism %d, want %d", op, p, want[op])
		}
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
}
