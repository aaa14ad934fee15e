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
// [gap/2, 3·gap/2) and each next one a further such gap later. With sink,
// each step also rescales the sink, drawn the same way from a stream of its
// own (so count's steps are those of the same seed without sink). The same
// seed gives the same schedule.
func chaosRescaleSchedule(seed int64, from, maxP, steps int, gap time.Duration, sink bool) []weir.RescaleStep {
	rng := rand.New(rand.NewSource(seed))
	sinkRng := rand.New(rand.NewSource(^seed))
	var out []weir.RescaleStep
	at, p, sp := time.Duration(0), from, from
	for i := 0; i < steps; i++ {
		at += gap/2 + time.Duration(rng.Int63n(int64(gap)))
		p = drawOther(rng, p, maxP)
		step := weir.RescaleStep{After: at.Round(time.Millisecond), Parallelism: map[string]int{"count": p}}
		if sink {
			sp = drawOther(sinkRng, sp, maxP)
			step.Parallelism["sink"] = sp
		}
		out = append(out, step)
	}
	return out
}

// drawOther draws a parallelism in 1..maxP other than p.
func drawOther(rng *rand.Rand, p, maxP int) int {
	next := 1 + rng.Intn(maxP-1)
	if next >= p {
		next++ // 1..maxP without p
	}
	return next
}

// formatRescaleSchedule prints a schedule as `node run --rescale` takes it
// ("120ms:count=3,310ms:count=1"; with the sink, "120ms:count=3,sink=2").
func formatRescaleSchedule(steps []weir.RescaleStep) string {
	var parts []string
	for _, st := range steps {
		part := fmt.Sprintf("%v:count=%d", st.After, st.Parallelism["count"])
		if sp, ok := st.Parallelism["sink"]; ok {
			part += fmt.Sprintf(",sink=%d", sp)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ",")
}
