package weir_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// collected gathers a sink's records in memory, from every instance.
type collected[T any] struct {
	mu   sync.Mutex
	recs []T
}

func (c *collected[T]) sink() func(int) weir.Sink[T] {
	return func(int) weir.Sink[T] { return &collectSink[T]{c: c} }
}

func (c *collected[T]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.recs...)
}

type collectSink[T any] struct{ c *collected[T] }

func (s *collectSink[T]) Open(weir.TaskInfo) error { return nil }
func (s *collectSink[T]) Finish() error            { return nil }
func (s *collectSink[T]) Close() error             { return nil }
func (s *collectSink[T]) Write(b []T) error {
	s.c.mu.Lock()
	s.c.recs = append(s.c.recs, b...)
	s.c.mu.Unlock()
	return nil
}

// reading is a seeded out-of-order sensor reading.
type reading struct {
	Sensor string
	TS     int64 // Unix ms
	Seq    int64
}

const (
	readingStep     = 10 * time.Millisecond
	readingDisorder = 300 * time.Millisecond
)

// mix is a seeded hash (splitmix64).
func mix(seed, i int64) uint64 {
	z := uint64(seed) + uint64(i)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// lateReading says whether reading i is an hour late (late by construction:
// far into the stream, so every watermark is past it whatever the timing).
func lateReading(i int64) bool { return i >= 20000 && i%1000 == 7 }

func makeReading(seed, i int64) reading {
	ts := time.Unix(1_700_000_000, 0).Add(time.Duration(i)*readingStep + time.Duration(mix(seed, i)%uint64(readingDisorder)))
	if lateReading(i) {
		ts = ts.Add(-time.Hour)
	}
	return reading{Sensor: fmt.Sprintf("s%d", mix(seed^1, i)%7), TS: ts.UnixMilli(), Seq: i}
}

// windowKey names one window of one key.
type windowKey struct {
	Key        string
	Start, End int64 // Unix ms
}

// expectedCounts counts the on-time readings per window straightforwardly:
// every window of size, starting every slide, that covers the reading.
func expectedCounts(seed, n int64, size, slide time.Duration) map[windowKey]int64 {
	out := map[windowKey]int64{}
	for i := range n {
		if lateReading(i) {
			continue
		}
		r := makeReading(seed, i)
		sz, sl := size.Milliseconds(), slide.Milliseconds()
		for start := r.TS - ((r.TS%sl)+sl)%sl; start > r.TS-sz; start -= sl {
			out[windowKey{r.Sensor, start, start + sz}]++
		}
	}
	return out
}

func checkCounts(t *testing.T, what string, got []weir.WindowResult[string, int64], want map[windowKey]int64) {
	t.Helper()
	seen := map[windowKey]int64{}
	for _, r := range got {
		k := windowKey{r.Key, r.Start.UnixMilli(), r.End.UnixMilli()}
		if _, dup := seen[k]; dup {
			t.Fatalf("%s: window %+v twice", what, k)
		}
		seen[k] = r.Value
	}
	for k, c := range want {
		if seen[k] != c {
			t.Fatalf("%s: window %+v counted %d, want %d", what, k, seen[k], c)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("%s: %d windows, want %d", what, len(seen), len(want))
	}
}

// TestEventTimeWindowCountsMatchStraightforwardComputation: tumbling and
// sliding event-time counts over seeded out-of-order readings equal an
// independent count, every window exactly once, with the last windows
// fired by the end of input; the hour-late readings are dropped and counted.
func TestEventTimeWindowCountsMatchStraightforwardComputation(t *testing.T) {
	const n, seed = 40000, 3
	g := weir.NewGraph("window-counts")
	src := weir.Generate(g, "readings", n, func(i int64) reading { return makeReading(seed, i) })
	timed := weir.WithTimestamps(src, "timestamps", func(r reading) time.Time { return time.UnixMilli(r.TS) },
		weir.BoundedOutOfOrderness(readingDisorder))
	keyed := weir.KeyBy(timed, func(r reading) string { return r.Sensor })
	tw := weir.Window(keyed, weir.Tumbling(time.Second))
	tumbling := weir.Aggregate(tw, "tumbling", weir.Count[reading](), weir.Parallelism(3))
	sw := weir.Window(keyed, weir.Sliding(2*time.Second, 500*time.Millisecond))
	sliding := weir.Aggregate(sw, "sliding", weir.Count[reading](), weir.Parallelism(2))
	var tum, sli collected[weir.WindowResult[string, int64]]
	weir.ToSink(tumbling, "tumbling-sink", tum.sink())
	weir.ToSink(sliding, "sliding-sink", sli.sink())
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, "tumbling", tum.all(), expectedCounts(seed, n, time.Second, time.Second))
	checkCounts(t, "sliding", sli.all(), expectedCounts(seed, n, 2*time.Second, 500*time.Millisecond))
	late := int64(0)
	for i := range int64(n) {
		if lateReading(i) {
			late++
		}
	}
	if got := tw.Late().Dropped(); got != late || sw.Late().Dropped() != late {
		t.Fatalf("late readings dropped: tumbling %d, sliding %d, want %d each", got, sw.Late().Dropped(), late)
	}
}

// TestAllowedLatenessFiresAgain: a reading within the allowed lateness
// updates its window, which fires again with the new count; one beyond it
// is late. One source instance and a watermark that each record moves make
// the order exact.
func TestAllowedLatenessFiresAgain(t *testing.T) {
	ts := []int64{100, 900, 1500, 700, 2600, 400, 5000} // ms
	g := weir.NewGraph("lateness")
	src := weir.Generate(g, "src", int64(len(ts)), func(i int64) reading { return reading{Sensor: "s", TS: ts[i], Seq: i} })
	// A map that sleeps makes every record its own buffer, so the watermark
	// after each record reaches the window before the next record.
	one := weir.Map(src, "one-by-one", func(r reading) reading { return r })
	timed := weir.WithTimestamps(one, "timestamps", func(r reading) time.Time { return time.UnixMilli(r.TS) })
	w := weir.Window(weir.KeyBy(timed, func(r reading) string { return r.Sensor }), weir.Tumbling(time.Second)).
		AllowedLateness(time.Second)
	counts := weir.Aggregate(w, "counts", weir.Count[reading]())
	var got collected[weir.WindowResult[string, int64]]
	weir.ToSink(counts, "sink", got.sink())
	if _, err := weir.Run(context.Background(), g, weir.WithRuntime(weir.RuntimeOptions{BatchSize: 1})); err != nil {
		t.Fatal(err)
	}
	var fired []string
	for _, r := range got.all() {
		fired = append(fired, fmt.Sprintf("[%d,%d)=%d", r.Start.UnixMilli(), r.End.UnixMilli(), r.Value))
	}
	// 1500 fires [0,1000) with 2 (wm 1499); 700 is within the lateness:
	// fires again with 3; 2600 fires [1000,2000) and clears [0,1000)
	// (wm 2599 ≥ 999+1000); 400 is then late; the end fires the rest.
	want := []string{"[0,1000)=2", "[0,1000)=3", "[1000,2000)=1", "[2000,3000)=1", "[5000,6000)=1"}
	if fmt.Sprint(fired) != fmt.Sprint(want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	if w.Late().Dropped() != 1 {
		t.Fatalf("late %d, want 1", w.Late().Dropped())
	}
}

// joinCount is one window's count of both sides of a key.
type joinCount struct {
	Key         string
	Start       int64
	Left, Right int64
}

// TestConnectedWindowJoinSharesStateAndTimers: a two-input keyed operator
// (the second input a union of two streams) counts both sides per key and
// tumbling window in shared keyed state and emits on an event-time timer;
// the result equals a straightforward count, and the watermark waits for
// the slower input.
func TestConnectedWindowJoinSharesStateAndTimers(t *testing.T) {
	const n, seed = 6000, 5
	g := weir.NewGraph("join")
	ts := func(r reading) time.Time { return time.UnixMilli(r.TS) }
	left := weir.WithTimestamps(weir.Generate(g, "left", n, func(i int64) reading { return makeReading(seed, i) }), "left-ts", ts,
		weir.BoundedOutOfOrderness(readingDisorder))
	right1 := weir.WithTimestamps(weir.Generate(g, "right1", n, func(i int64) reading { return makeReading(seed+1, i) }), "right1-ts", ts,
		weir.BoundedOutOfOrderness(readingDisorder))
	right2 := weir.WithTimestamps(weir.Generate(g, "right2", n, func(i int64) reading { return makeReading(seed+2, i) }, weir.Parallelism(2)), "right2-ts", ts,
		weir.BoundedOutOfOrderness(readingDisorder))
	right := weir.Union("right", right1, right2)
	key := func(r reading) string { return r.Sensor }
	counts := weir.NewMapState[int64, [2]int64](g, "counts")
	const size = int64(1000)
	add := func(side int) weir.ProcessFunc[reading, string, joinCount] {
		return func(ctx *weir.KeyedContext[string], r reading, out *weir.Emitter[joinCount]) error {
			start := r.TS - r.TS%size
			c, _ := counts.Get(ctx, start)
			c[side]++
			counts.Put(ctx, start, c)
			ctx.Timers().RegisterEventTime(time.UnixMilli(start + size - 1))
			return nil
		}
	}
	joined := weir.CoProcess(weir.Connect(weir.KeyBy(left, key), weir.KeyBy(right, key)), "join",
		weir.CoFunctions[reading, reading, string, joinCount]{
			OnA: add(0), OnB: add(1),
			OnTimer: func(ctx *weir.KeyedContext[string], tm weir.Timer, out *weir.Emitter[joinCount]) error {
				start := tm.At.UnixMilli() + 1 - size
				c, _ := counts.Get(ctx, start)
				counts.Delete(ctx, start)
				if ctx.Timestamp() != tm.At {
					return fmt.Errorf("timestamp %v in OnTimer, want %v", ctx.Timestamp(), tm.At)
				}
				out.Emit(joinCount{Key: ctx.Key(), Start: start, Left: c[0], Right: c[1]})
				return nil
			},
		}, weir.WithState(counts), weir.Parallelism(3))
	var got collected[joinCount]
	weir.ToSink(joined, "sink", got.sink())
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	want := map[windowKey][2]int64{}
	for side, seeds := range [][]int64{{seed}, {seed + 1, seed + 2}} {
		for _, s := range seeds {
			for i := range int64(n) {
				r := makeReading(s, i)
				if lateReading(i) {
					continue
				}
				k := windowKey{r.Sensor, r.TS - r.TS%size, 0}
				c := want[k]
				c[side]++
				want[k] = c
			}
		}
	}
	res := got.all()
	sort.Slice(res, func(i, j int) bool { return res[i].Start < res[j].Start })
	seen := map[windowKey]bool{}
	for _, r := range res {
		k := windowKey{r.Key, r.Start, 0}
		if seen[k] {
			t.Fatalf("window %+v twice", k)
		}
		seen[k] = true
		if w := want[k]; w != [2]int64{r.Left, r.Right} {
			t.Fatalf("window %+v: left %d right %d, want %v", k, r.Left, r.Right, w)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("%d windows, want %d", len(seen), len(want))
	}
}
