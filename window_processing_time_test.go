package weir_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestProcessingTimeWindowsAndTimers: processing-time tumbling windows fire
// on the wall clock while the job runs (aligned, each window once), and a
// processing-time timer set by each key's first record fires once for that
// key. The job is slowed to about a second so both have time to fire.
func TestProcessingTimeWindowsAndTimers(t *testing.T) {
	const n = 3000
	g := weir.NewGraph("processing-time")
	src := weir.Generate(g, "src", n, func(i int64) reading { return reading{Sensor: fmt.Sprintf("s%d", i%3), Seq: i} })
	sleepers := weir.NewSleepers(300 * time.Microsecond)
	slow := weir.MapWithContext(src, "slow", func(ctx *weir.OpContext, r reading) reading {
		sleepers[ctx.Instance()].Tick()
		return r
	})
	keyed := weir.KeyBy(slow, func(r reading) string { return r.Sensor })
	counts := weir.Aggregate(weir.Window(keyed, weir.Tumbling(100*time.Millisecond).InProcessingTime()), "counts", weir.Count[reading]())
	started := weir.NewValueState[bool](g, "started")
	fired := weir.ProcessWithTimers(keyed, "timers", weir.KeyedFunctions[reading, string, string]{
		OnRecord: func(ctx *weir.KeyedContext[string], r reading, _ *weir.Emitter[string]) error {
			if !started.Get(ctx) {
				started.Set(ctx, true)
				ctx.Timers().RegisterProcessingTime(ctx.Timers().CurrentProcessingTime().Add(20 * time.Millisecond))
			}
			return nil
		},
		OnTimer: func(ctx *weir.KeyedContext[string], tm weir.Timer, out *weir.Emitter[string]) error {
			if !tm.ProcessingTime {
				return fmt.Errorf("an event-time timer fired")
			}
			out.Emit(ctx.Key())
			return nil
		},
	}, weir.WithState(started))
	var windows collected[weir.WindowResult[string, int64]]
	var keys collected[string]
	weir.ToSink(counts, "windows", windows.sink())
	weir.ToSink(fired, "fired", keys.sink())
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	seen, sum := map[windowKey]bool{}, int64(0)
	for _, w := range windows.all() {
		k := windowKey{w.Key, w.Start.UnixMilli(), w.End.UnixMilli()}
		if seen[k] || k.End-k.Start != 100 || k.Start%100 != 0 {
			t.Fatalf("window %+v: twice, or not an aligned 100 ms window", k)
		}
		seen[k] = true
		sum += w.Value
	}
	if len(seen) < 3 || sum > n {
		t.Fatalf("%d windows counting %d records; want at least 3 and at most %d", len(seen), sum, n)
	}
	got := map[string]int{}
	for _, k := range keys.all() {
		got[k]++
	}
	if len(got) != 3 || got["s0"] != 1 || got["s1"] != 1 || got["s2"] != 1 {
		t.Fatalf("processing-time timers fired %v, want once for each of 3 keys", got)
	}
}
