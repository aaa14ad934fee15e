package weir_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir"
)

// TestUndeclaredStateFailsValidation: a state made for the graph that no
// operator declares with WithState fails the graph's validation (Validate,
// and Run before it starts anything) with an error naming the state and the
// keyed operator that declares none (before: the graph validated and the
// run failed only when the function first touched the state).
func TestUndeclaredStateFailsValidation(t *testing.T) {
	g := weir.NewGraph("undeclared", weir.WithParallelism(2))
	var opened atomic.Int64
	src := weir.FromSource(g, "source", func(int) weir.Source[int64] { return &openCounter{opened: &opened} })
	n := weir.NewValueState[int64](g, "n")
	keyed := weir.KeyBy(src, func(v int64) int64 { return v % 10 })
	// A keyed operator with its own state is not the culprit.
	own := weir.NewValueState[int64](g, "own")
	other := weir.Process(keyed, "other", func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error {
		own.Set(ctx, v)
		out.Emit(v)
		return nil
	}, weir.WithState(own))
	weir.ToSink(other, "other-sink", weir.DiscardSink[int64](nil))
	countUndeclared(keyed, n)
	want := `state "n" is declared by no operator: operator "count" declares no state`
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Validate: %v, want an error saying %s", err, want)
	}
	if _, err := weir.Run(context.Background(), g); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v, want an error saying %s", err, want)
	}
	if o := opened.Load(); o != 0 {
		t.Fatalf("the source was opened %d times: the run started before validation failed", o)
	}
}

// openCounter is a source of no records that counts its opens.
type openCounter struct{ opened *atomic.Int64 }

func (s *openCounter) Open(weir.TaskInfo) error        { s.opened.Add(1); return nil }
func (s *openCounter) Read([]int64) (int, bool, error) { return 0, true, nil }
func (s *openCounter) Offset() int64                   { return 0 }
func (s *openCounter) SeekTo(int64) error              { return nil }
func (s *openCounter) Close() error                    { return nil }

// TestStateWithoutWithStateNamesStateAndOperator: the run-time net behind
// validation. A keyed function that uses a state its operator does not
// declare fails the run with an error naming the state and the operator
// (before: "index out of range" from inside the runtime): a state declared
// by another operator, or made for another graph.
func TestStateWithoutWithStateNamesStateAndOperator(t *testing.T) {
	for _, tc := range []struct {
		name         string
		otherGraph   bool // make the state for another graph, not run
		declareOther bool // declare the state on another operator
		want         string
	}{
		{"made for another graph", true, false, `operator "count" uses state "n" without declaring it`},
		{"declared elsewhere", false, true, `operator "count" uses state "n", which operator "other" declares`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := weir.NewGraph("undeclared", weir.WithParallelism(2))
			src := weir.Generate(g, "source", 100, func(i int64) int64 { return i })
			owner := g
			if tc.otherGraph {
				owner = weir.NewGraph("elsewhere")
			}
			n := weir.NewValueState[int64](owner, "n")
			keyed := weir.KeyBy(src, func(v int64) int64 { return v % 10 })
			if tc.declareOther {
				other := weir.Process(keyed, "other", func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error {
					out.Emit(v)
					return nil
				}, weir.WithState(n))
				weir.ToSink(other, "other-sink", weir.DiscardSink[int64](nil))
			}
			countUndeclared(keyed, n)
			_, err := weir.Run(context.Background(), g)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run error %v, want one saying %s", err, tc.want)
			}
		})
	}
}

// TestStateOfAnotherGraphIsRefusedByWithState: declaring a state made for
// another graph fails validation, naming both.
func TestStateOfAnotherGraphIsRefusedByWithState(t *testing.T) {
	g := weir.NewGraph("mine")
	n := weir.NewValueState[int64](weir.NewGraph("theirs"), "n")
	src := weir.Generate(g, "source", 10, func(i int64) int64 { return i })
	counts := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v }), "count",
		func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error { return nil }, weir.WithState(n))
	weir.ToSink(counts, "sink", weir.DiscardSink[int64](nil))
	want := `operator "count": state "n" was made for graph "theirs", not this one`
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Validate: %v, want an error saying %s", err, want)
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

// countUndeclared adds operator "count", which counts records per key in n
// without declaring it, and its sink.
func countUndeclared(keyed weir.KeyedStream[int64, int64], n *weir.ValueState[int64]) {
	counts := weir.Process(keyed, "count", func(ctx *weir.KeyedContext[int64], v int64, out *weir.Emitter[int64]) error {
		c := n.Get(ctx) + 1
		n.Set(ctx, c)
		out.Emit(c)
		return nil
	})
	weir.ToSink(counts, "sink", weir.DiscardSink[int64](nil))
}
