package weir_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// TestLiveRescaleAddsBackARemovedInstance rescales keycount's count
// 2 → 3 → 2 → 3 → 2 …: count[2] is removed and then added again, a new
// task at the index of one a rescale removed. Its inputs are its own (the
// removed one's are not counted in, which left the next rescale waiting
// for barriers that never come), so every rescale commits and every record
// reaches the sink once. The run is bounded: a rescale that hangs is
// stopped with the job after a minute and fails the test.
func TestLiveRescaleAddsBackARemovedInstance(t *testing.T) {
	const n, k = 200_000, 40
	var got atomic.Int64
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, SleepMs: 0.02, Discarded: &got})
	if err != nil {
		t.Fatal(err)
	}
	var steps []weir.RescaleStep
	for i := range 6 {
		steps = append(steps, weir.RescaleStep{After: time.Duration(i+1) * 20 * time.Millisecond, Parallelism: map[string]int{"count": 3 - i%2}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := weir.Run(ctx, g, weir.WithRescaleSchedule(steps...))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rescales {
		if r.Err != "" {
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
	}
	if len(res.Rescales) != len(steps) || res.Failures != 0 {
		t.Fatalf("%d rescales, %d task failures; want %d and none", len(res.Rescales), res.Failures, len(steps))
	}
	if got.Load() != n || res.RecordsOut != n {
		t.Fatalf("sink got %d records (records out %d), want %d each", got.Load(), res.RecordsOut, n)
	}
}
