package main

import (
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/weirstream/weir"
)

// chaosRescaleSchedule draws a seeded schedule of live rescales of keycount's
// count stage: steps rescales, each to a parallelism in 1..maxP different
// from the one before it (the job starts at from), the first after a gap in
// [gap/2, 3·gap/2) and each next one a further such gap later. The same seed
// gives the same schedule.
func chaosRescaleSchedule(seed int64, from, maxP, steps int, gap time.Duration) []weir.RescaleStep {
	rng := rand.New(rand.NewSource(seed))
	var out []weir.RescaleStep
	at, p := time.Duration(0), from
	for i := 0; i < steps; i++ {
		at += gap/2 + time.Duration(rng.Int63n(int64(gap)))
		next := 1 + rng.Intn(maxP-1)
		if next >= p {
			next++ // 1..maxP without p
		}
		p = next
		out = append(out, weir.RescaleStep{After: at.Round(time.Millisecond), Parallelism: map[string]int{"count": p}})
	}
	return out
}

// formatRescaleSchedule prints a schedule as `node run --rescale` takes it
// ("120ms:count=3,310ms:count=1").
func formatRescaleSchedule(steps []weir.RescaleStep) string {
	var parts []string
	for _, st := range steps {
		parts = append(parts, fmt.Sprintf("%v:count=%d", st.After, st.Parallelism["count"]))
	}
	return strings.Join(parts, ",")
}
