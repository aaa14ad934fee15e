package flow

import (
	"testing"
	"time"
)

// TestGroupWaitsSplitsBeforeByMovingGroups: the waits before a rescale are
// those of the slot holding its start and the BeforeWindow of slots before
// it, per key group, so that once the plan says which groups move they are
// split into moved and unmoved; older slots, reused or not, count no more,
// nor do records after the start's slot.
func TestGroupWaitsSplitsBeforeByMovingGroups(t *testing.T) {
	base := time.Unix(1000, 0) // a slot's start
	at := func(d time.Duration) time.Time { return base.Add(d) }
	moving := func(g int) bool { return g == 3 || g == 7 }
	type add struct {
		at    time.Duration
		group int
		wait  time.Duration
		n     int
	}
	for _, tc := range []struct {
		name                 string
		adds                 []add
		start                time.Duration
		moved, unmoved       int64 // records
		movedP99, unmovedP99 float64
	}{
		{name: "empty", start: time.Second},
		{name: "split by group", start: time.Second, adds: []add{
			{0, 3, 3 * time.Millisecond, 10}, {100 * time.Millisecond, 7, 3 * time.Millisecond, 10},
			{200 * time.Millisecond, 1, 10 * time.Microsecond, 30}, {900 * time.Millisecond, 2, 10 * time.Microsecond, 50},
		}, moved: 20, unmoved: 80, movedP99: 4.096, unmovedP99: 0.016},
		{name: "older than the window", start: 3 * time.Second, adds: []add{
			{0, 3, time.Millisecond, 5},                             // slot 0: gone
			{500 * time.Millisecond, 1, time.Millisecond, 5},        // slot 1: its place taken by the start's slot 6
			{1000 * time.Millisecond, 1, 20 * time.Microsecond, 6},  // slot 2: the oldest kept
			{2900 * time.Millisecond, 7, 100 * time.Microsecond, 4}, // slot 5
			{3 * time.Second, 2, 20 * time.Microsecond, 1},          // slot 6: the start's
		}, moved: 4, unmoved: 7, movedP99: 0.128, unmovedP99: 0.032},
		{name: "a reused slot holds only its own", start: 3 * time.Second, adds: []add{
			{100 * time.Millisecond, 3, time.Second, 9},            // slot 0, reused by slot 5 below
			{2600 * time.Millisecond, 1, 10 * time.Microsecond, 2}, // slot 5
		}, moved: 0, unmoved: 2, unmovedP99: 0.016},
		{name: "after the start's slot", start: time.Second, adds: []add{
			{1600 * time.Millisecond, 3, time.Millisecond, 5},
		}, moved: 0, unmoved: 0},
	} {
		var w GroupWaits
		for _, a := range tc.adds {
			w.Add(at(a.at), a.group, a.wait, a.n)
		}
		m, u := w.Before(at(tc.start), moving)
		ml, ul := m.Latency(), u.Latency()
		if ml.Records != tc.moved || ul.Records != tc.unmoved || ml.P99Ms != tc.movedP99 || ul.P99Ms != tc.unmovedP99 {
			t.Errorf("%s: moved %+v, unmoved %+v; want %d records (p99 %v ms) and %d (p99 %v ms)",
				tc.name, ml, ul, tc.moved, tc.movedP99, tc.unmoved, tc.unmovedP99)
		}
	}
}
