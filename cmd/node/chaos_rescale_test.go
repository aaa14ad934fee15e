package main

import (
	"testing"
	"time"
)

// TestChaosRescaleSchedule: a seed draws the same schedule each time, every
// step changes count to a parallelism in 1..max other than the one before,
// and the steps' times increase by gaps in [gap/2, 3·gap/2). With the sink,
// count's steps are the same and every step also changes the sink that way.
func TestChaosRescaleSchedule(t *testing.T) {
	const gap = 200 * time.Millisecond
	for seed := int64(1); seed <= 200; seed++ {
		steps := chaosRescaleSchedule(seed, 2, 4, 5, gap, false)
		if got, again := formatRescaleSchedule(steps), formatRescaleSchedule(chaosRescaleSchedule(seed, 2, 4, 5, gap, false)); got != again {
			t.Fatalf("seed %d: schedule %s, then %s", seed, got, again)
		}
		withSink := chaosRescaleSchedule(seed, 2, 4, 5, gap, true)
		p, sp, at := 2, 2, time.Duration(0)
		for i, st := range steps {
			next := st.Parallelism["count"]
			if next < 1 || next > 4 || next == p || len(st.Parallelism) != 1 {
				t.Fatalf("seed %d step %d: %v after count=%d", seed, i, st.Parallelism, p)
			}
			if d := st.After - at; d < gap/2-time.Millisecond || d > 3*gap/2+time.Millisecond {
				t.Fatalf("seed %d step %d: %v after the step before, want within [%v, %v]", seed, i, d, gap/2, 3*gap/2)
			}
			ws := withSink[i]
			nextSink := ws.Parallelism["sink"]
			if ws.After != st.After || ws.Parallelism["count"] != next || len(ws.Parallelism) != 2 || nextSink < 1 || nextSink > 4 || nextSink == sp {
				t.Fatalf("seed %d step %d with the sink: %v at %v, want count=%d at %v and the sink changed from %d", seed, i, ws.Parallelism, ws.After, next, st.After, sp)
			}
			p, sp, at = next, nextSink, st.After
		}
	}
}
