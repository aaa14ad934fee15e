package weir_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weirstream/weir"
)

// Sliding windows of 10 seconds every 5 seconds: each click counts in the
// two windows that contain it.
func ExampleSliding() {
	g := weir.NewGraph("sliding")
	src := weir.Generate(g, "clicks", int64(len(clicks)), func(i int64) click { return clicks[i] })
	timed := weir.WithTimestamps(src, "timestamps", func(c click) time.Time { return time.Unix(c.At, 0) },
		weir.BoundedOutOfOrderness(5*time.Second))
	all := weir.KeyBy(timed, func(click) string { return "all" })
	total := weir.Aggregate(weir.Window(all, weir.Sliding(10*time.Second, 5*time.Second)), "count", weir.Count[click]())
	text := weir.Map(total, "format", func(r weir.WindowResult[string, int64]) string {
		return fmt.Sprintf("[%d,%d): %d", r.Start.Unix(), r.End.Unix(), r.Value)
	})
	weir.ToSink(text, "print", weir.StdoutSink[string]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "[-5,5): 4"
	// "[0,10): 4"
	// "[5,15): 2"
	// "[10,20): 2"
	// "[25,35): 1"
	// "[30,40): 1"
}

// Session windows close after a gap of 5 seconds without a click of their
// key; overlapping sessions merge (the aggregator needs Merge).
func ExampleSession() {
	g := weir.NewGraph("sessions")
	src := weir.Generate(g, "clicks", int64(len(clicks)), func(i int64) click { return clicks[i] })
	timed := weir.WithTimestamps(src, "timestamps", func(c click) time.Time { return time.Unix(c.At, 0) },
		weir.BoundedOutOfOrderness(5*time.Second))
	byUser := weir.KeyBy(timed, func(c click) string { return c.User })
	sessions := weir.Aggregate(weir.Window(byUser, weir.Session(5*time.Second)), "sessions", weir.Count[click]())
	text := weir.Map(sessions, "format", func(r weir.WindowResult[string, int64]) string {
		return fmt.Sprintf("%s [%d,%d): %d clicks", r.Key, r.Start.Unix(), r.End.Unix(), r.Value)
	})
	weir.ToSink(text, "print", weir.StdoutSink[string]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "bob [2,7): 1 clicks"
	// "ann [1,9): 3 clicks"
	// "bob [11,16): 1 clicks"
	// "ann [12,17): 1 clicks"
	// "ann [30,35): 1 clicks"
}

// WindowJoin pairs the records of two keyed streams that fall into the same
// event-time window: here each user's clicks with their purchases, per
// 10-second tumbling window.
func ExampleWindowJoin() {
	type purchase struct {
		User  string
		At    int64
		Cents int64
	}
	purchases := []purchase{{"ann", 5, 300}, {"bob", 14, 150}, {"ann", 25, 100}}
	g := weir.NewGraph("clicks-and-purchases")
	cs := weir.Generate(g, "clicks", int64(len(clicks)), func(i int64) click { return clicks[i] })
	ps := weir.Generate(g, "purchases", int64(len(purchases)), func(i int64) purchase { return purchases[i] })
	timedClicks := weir.WithTimestamps(cs, "click-time", func(c click) time.Time { return time.Unix(c.At, 0) })
	timedPurchases := weir.WithTimestamps(ps, "purchase-time", func(p purchase) time.Time { return time.Unix(p.At, 0) })
	joined := weir.WindowJoin(weir.Connect(weir.KeyBy(timedClicks, func(c click) string { return c.User }),
		weir.KeyBy(timedPurchases, func(p purchase) string { return p.User })), weir.Tumbling(10*time.Second), "join",
		func(user string, start, end time.Time, cs []click, ps []purchase, out *weir.Emitter[string]) error {
			var cents int64
			for _, p := range ps {
				cents += p.Cents
			}
			out.Emit(fmt.Sprintf("%s [%d,%d): %d clicks, %d cents", user, start.Unix(), end.Unix(), len(cs), cents))
			return nil
		})
	weir.ToSink(joined, "print", weir.StdoutSink[string]())
	if _, err := weir.Run(context.Background(), g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "ann [0,10): 3 clicks, 300 cents"
	// "bob [10,20): 1 clicks, 150 cents"
}
