package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weirstream/weir"
)

// Map, Filter and FlatMap transform records one at a time. With the
// default parallelism of 1 every stage keeps its input's order.
func ExampleMap() {
	g := weir.NewGraph("words")
	lines := []string{"to be or", "not to be"}
	src := weir.Generate(g, "lines", int64(len(lines)), func(i int64) string { return lines[i] })
	words := weir.FlatMap(src, "split", func(line string, out *weir.Emitter[string]) error {
		for _, w := range strings.Fields(line) {
			out.Emit(w)
		}
		return nil
	})
	long := weir.Filter(words, "not-short", func(w string) bool { return len(w) > 2 })
	upper := weir.Map(long, "upper", strings.ToUpper)
	weir.ToSink(upper, "print", weir.StdoutSink[string]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "NOT"
}

// FlatMap emits any number of records for each input record.
func ExampleFlatMap() {
	g := weir.NewGraph("repeat")
	src := weir.Generate(g, "numbers", 3, func(i int64) int64 { return i + 1 })
	repeated := weir.FlatMap(src, "repeat", func(n int64, out *weir.Emitter[int64]) error {
		for range n {
			out.Emit(n)
		}
		return nil
	})
	weir.ToSink(repeated, "print", weir.StdoutSink[int64]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1
	// 2
	// 2
	// 3
	// 3
	// 3
}

// Filter keeps the records for which its function returns true.
func ExampleFilter() {
	g := weir.NewGraph("even")
	src := weir.Generate(g, "numbers", 6, func(i int64) int64 { return i })
	even := weir.Filter(src, "even", func(n int64) bool { return n%2 == 0 })
	weir.ToSink(even, "print", weir.StdoutSink[int64]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 0
	// 2
	// 4
}

// KeyBy routes every record of a key to one instance, and Process runs a
// function with that key's state in scope: here a running count per word,
// over two instances. The state is made for the graph and declared by the
// operator that uses it (WithState); checkpoints store it by key group.
func ExampleProcess() {
	g := weir.NewGraph("word-count", weir.WithParallelism(2))
	words := []string{"to", "be", "or", "not", "to", "be"}
	src := weir.Generate(g, "words", int64(len(words)), func(i int64) string { return words[i] }, weir.Parallelism(1))
	count := weir.NewValueState[int64](g, "count")
	counts := weir.Process(weir.KeyBy(src, func(w string) string { return w }), "count",
		func(ctx *weir.KeyedContext[string], w string, out *weir.Emitter[string]) error {
			n := count.Get(ctx) + 1
			count.Set(ctx, n)
			out.Emit(fmt.Sprintf("%s=%d", ctx.Key(), n))
			return nil
		}, weir.WithState(count))
	var seen []string
	collect := weir.Map(counts, "collect", func(s string) string { seen = append(seen, s); return s }, weir.Parallelism(1))
	weir.ToSink(collect, "discard", weir.DiscardSink[string](nil), weir.Parallelism(1))
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	slices.Sort(seen) // the two instances' outputs interleave
	fmt.Println(seen)
	// Output:
	// [be=1 be=2 not=1 or=1 to=1 to=2]
}

// Union merges streams of one type into one; records of each input keep
// their order, the inputs interleave.
func ExampleUnion() {
	g := weir.NewGraph("union")
	web := weir.Generate(g, "web", 3, func(i int64) string { return fmt.Sprintf("web-%d", i) })
	app := weir.Generate(g, "app", 2, func(i int64) string { return fmt.Sprintf("app-%d", i) })
	var seen []string
	all := weir.Map(weir.Union("all", web, app), "collect", func(s string) string { seen = append(seen, s); return s })
	weir.ToSink(all, "discard", weir.DiscardSink[string](nil))
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	slices.Sort(seen)
	fmt.Println(seen)
	// Output:
	// [app-0 app-1 web-0 web-1 web-2]
}

// Generate is a replayable source of count records made from their index
// (weir.Unbounded for one that never ends); its offsets are checkpointed,
// and a restore may change its parallelism (each instance generates the
// indexes i with i mod parallelism = its instance).
func ExampleGenerate() {
	g := weir.NewGraph("squares")
	src := weir.Generate(g, "squares", 4, func(i int64) int64 { return i * i })
	weir.ToSink(src, "print", weir.StdoutSink[int64]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 0
	// 1
	// 4
	// 9
}

// FileSink writes records as JSON lines. With checkpoints it runs as one
// instance and stages its output, appending to the file only what completed
// checkpoints cover: after a failure and a restore the file holds each
// record exactly once.
func ExampleFileSink() {
	dir, err := os.MkdirTemp("", "weir-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.jsonl")
	type reading struct {
		Sensor string `json:"sensor"`
		Value  int64  `json:"value"`
	}
	g := weir.NewGraph("readings")
	src := weir.Generate(g, "readings", 3, func(i int64) reading { return reading{fmt.Sprintf("s%d", i), 10 * i} })
	weir.ToSink(src, "file", weir.FileSink[reading](out))
	cp := weir.DefaultCheckpointConfig()
	cp.StateDir = filepath.Join(dir, "state")
	if _, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cp)); err != nil {
		fmt.Println(err)
		return
	}
	b, err := os.ReadFile(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(b))
	// Output:
	// {"sensor":"s0","value":0}
	// {"sensor":"s1","value":10}
	// {"sensor":"s2","value":20}
}
