package weir_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weirstream/weir"
)

// click is a user's click at event time At (Unix seconds).
type click struct {
	User string
	At   int64
}

var clicks = []click{{"ann", 1}, {"bob", 2}, {"ann", 4}, {"ann", 3}, {"bob", 11}, {"ann", 12}, {"ann", 30}}

// Count each user's clicks per 10-second tumbling window of event time,
// allowing records 5 seconds out of order. The last windows fire when the
// input ends. Windows that end together fire in key-group order.
func ExampleWindow() {
	g := weir.NewGraph("clicks-per-window")
	src := weir.Generate(g, "clicks", int64(len(clicks)), func(i int64) click { return clicks[i] })
	timed := weir.WithTimestamps(src, "timestamps", func(c click) time.Time { return time.Unix(c.At, 0) },
		weir.BoundedOutOfOrderness(5*time.Second))
	byUser := weir.KeyBy(timed, func(c click) string { return c.User })
	counts := weir.Aggregate(weir.Window(byUser, weir.Tumbling(10*time.Second)), "count", weir.Count[click]())
	text := weir.Map(counts, "format", func(r weir.WindowResult[string, int64]) string {
		return fmt.Sprintf("%s [%d,%d): %d", r.Key, r.Start.Unix(), r.End.Unix(), r.Value)
	})
	weir.ToSink(text, "print", weir.StdoutSink[string]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "bob [0,10): 1"
	// "ann [0,10): 3"
	// "bob [10,20): 1"
	// "ann [10,20): 1"
	// "ann [30,40): 1"
}

// A keyed function with timers: each user's first click sets an event-time
// timer 10 seconds later, which reports how many clicks the user had when the
// watermark passed it (here every click is read before the first watermark,
// so ann's click at 30 s is counted too).
func ExampleProcessWithTimers() {
	g := weir.NewGraph("first-ten-seconds")
	src := weir.Generate(g, "clicks", int64(len(clicks)), func(i int64) click { return clicks[i] })
	timed := weir.WithTimestamps(src, "timestamps", func(c click) time.Time { return time.Unix(c.At, 0) },
		weir.BoundedOutOfOrderness(5*time.Second))
	seen := weir.NewValueState[int64](g, "seen")
	out := weir.ProcessWithTimers(weir.KeyBy(timed, func(c click) string { return c.User }), "first-ten",
		weir.KeyedFunctions[click, string, string]{
			OnRecord: func(ctx *weir.KeyedContext[string], c click, _ *weir.Emitter[string]) error {
				n := seen.Get(ctx)
				if n == 0 {
					ctx.Timers().RegisterEventTime(ctx.Timestamp().Add(10 * time.Second))
				}
				seen.Set(ctx, n+1)
				return nil
			},
			OnTimer: func(ctx *weir.KeyedContext[string], t weir.Timer, out *weir.Emitter[string]) error {
				out.Emit(fmt.Sprintf("%s: %d clicks by %d", ctx.Key(), seen.Get(ctx), t.At.Unix()))
				return nil
			},
			OnEnd: func(out *weir.Emitter[string]) error {
				out.Emit("end of input")
				return nil
			},
		}, weir.WithState(seen))
	weir.ToSink(out, "print", weir.StdoutSink[string]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "ann: 5 clicks by 11"
	// "bob: 2 clicks by 12"
	// "end of input"
}

// Union merges two streams of clicks; CoProcess joins them with a stream of
// user names by user, in keyed state both inputs share.
func ExampleCoProcess() {
	type name struct{ User, Name string }
	g := weir.NewGraph("join")
	web := weir.Generate(g, "web", 2, func(i int64) click { return click{"ann", i} })
	app := weir.Generate(g, "app", 1, func(i int64) click { return click{"bob", 5} })
	all := weir.Union("all-clicks", web, app)
	names := weir.Generate(g, "names", 2, func(i int64) name { return []name{{"ann", "Ann"}, {"bob", "Bob"}}[i] })
	fullName := weir.NewValueState[string](g, "name")
	pending := weir.NewValueState[int64](g, "pending")
	joined := weir.CoProcess(weir.Connect(weir.KeyBy(all, func(c click) string { return c.User }), weir.KeyBy(names, func(n name) string { return n.User })),
		"join", weir.CoFunctions[click, name, string, string]{
			OnA: func(ctx *weir.KeyedContext[string], c click, out *weir.Emitter[string]) error {
				if n, ok := fullName.Value(ctx); ok {
					out.Emit(n + " clicked")
					return nil
				}
				pending.Set(ctx, pending.Get(ctx)+1) // the name comes later
				return nil
			},
			OnB: func(ctx *weir.KeyedContext[string], n name, out *weir.Emitter[string]) error {
				fullName.Set(ctx, n.Name)
				for range pending.Get(ctx) {
					out.Emit(n.Name + " clicked")
				}
				pending.Clear(ctx)
				return nil
			},
		}, weir.WithState(fullName, pending))
	var n int
	counted := weir.Map(joined, "count", func(s string) string { n++; return s })
	weir.ToSink(counted, "discard", weir.DiscardSink[string](nil))
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	fmt.Println(n, "clicks joined with a name")
	// Output:
	// 3 clicks joined with a name
}
