package weir_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestWindowJoinMatchesStraightforwardJoin: a sliding-window join of two
// seeded out-of-order streams by sensor gives, for every window and key
// with readings on both sides, exactly the readings a straightforward
// computation puts there, once.
func TestWindowJoinMatchesStraightforwardJoin(t *testing.T) {
	const n = 6000
	g := weir.NewGraph("window-join")
	ts := func(r reading) time.Time { return time.UnixMilli(r.TS) }
	side := func(name string, seed int64) weir.KeyedStream[reading, string] {
		s := weir.Generate(g, name, n, func(i int64) reading { return makeReading(seed, i) }, weir.Parallelism(2))
		timed := weir.WithTimestamps(s, name+"-ts", ts, weir.BoundedOutOfOrderness(readingDisorder))
		return weir.KeyBy(timed, func(r reading) string { return r.Sensor })
	}
	spec := weir.Sliding(2*time.Second, time.Second)
	joined := weir.WindowJoin(weir.Connect(side("left", 21), side("right", 22)), spec, "join",
		func(key string, start, end time.Time, as, bs []reading, out *weir.Emitter[joinCount]) error {
			if end.Sub(start) != 2*time.Second {
				t.Errorf("window [%v, %v)", start, end)
			}
			out.Emit(joinCount{Key: key, Start: start.UnixMilli(), Left: int64(len(as)), Right: int64(len(bs))})
			return nil
		}, weir.Parallelism(3))
	var got collected[joinCount]
	weir.ToSink(joined, "sink", got.sink())
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	counts := func(seed int64) map[windowKey]int64 {
		return expectedCounts(seed, n, 2*time.Second, time.Second)
	}
	left, right := counts(21), counts(22)
	want := map[windowKey][2]int64{}
	for k, l := range left {
		if r, ok := right[k]; ok {
			want[windowKey{k.Key, k.Start, 0}] = [2]int64{l, r}
		}
	}
	seen := map[windowKey]bool{}
	for _, r := range got.all() {
		k := windowKey{r.Key, r.Start, 0}
		if seen[k] {
			t.Fatalf("window %+v joined twice", k)
		}
		seen[k] = true
		if w, ok := want[k]; !ok || w != [2]int64{r.Left, r.Right} {
			t.Fatalf("window %+v: %d ⋈ %d readings, want %v (present %v)", k, r.Left, r.Right, w, ok)
		}
	}
	if len(seen) != len(want) || len(want) < 100 {
		t.Fatalf("%d windows joined, want %d (at least 100)", len(seen), len(want))
	}
}
