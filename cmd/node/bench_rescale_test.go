package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
)

// sampleAt is a record due at due that reached a sink at out.
func sampleAt(due, out time.Duration, group, run int) latencySample {
	return latencySample{DueUs: int32(due / time.Microsecond), OutUs: int32(out / time.Microsecond), Group: int16(group), Run: int16(run)}
}

// steadySamples is n records per 10 ms from..to, each delivered 5 ms after
// it was due, alternating between key groups 0 and 1.
func steadySamples(from, to time.Duration, n int) []latencySample {
	var out []latencySample
	for t := from; t < to; t += 10 * time.Millisecond {
		for i := range n {
			out = append(out, sampleAt(t, t+5*time.Millisecond, i%2, 0))
		}
	}
	return out
}

func TestRescaleTimelineBucketsAndMean(t *testing.T) {
	s := steadySamples(0, time.Second, 10) // 1000 records/s, out from 5 ms
	tl := newTimeline(s, time.Second, rescaleBucket)
	if len(tl.counts) != 10 {
		t.Fatalf("%d buckets, want 10", len(tl.counts))
	}
	for i, c := range tl.counts {
		if c != 100 {
			t.Fatalf("bucket %d holds %d records, want 100: %v", i, c, tl.counts)
		}
	}
	if r := tl.mean(200*time.Millisecond, 700*time.Millisecond); r != 1000 {
		t.Fatalf("mean %v records/s, want 1000", r)
	}
	if r := tl.perSecond()[3]; r != 1000 {
		t.Fatalf("bucket 3: %v records/s, want 1000", r)
	}
	if r := tl.mean(2*time.Second, 3*time.Second); r != 0 {
		t.Fatalf("mean past the end: %v, want 0", r)
	}
}

// perMs is n records arriving in every ms from..to (group 0, run 0).
func perMs(from, to time.Duration, n int) []latencySample {
	var out []latencySample
	for t := from; t < to; t += time.Millisecond {
		for range n {
			out = append(out, sampleAt(t, t+300*time.Microsecond, 0, 0))
		}
	}
	return out
}

// TestRescaleDisruptionIsTheRescalesStretch: disruption counts the 1 ms
// steps below half the steady rate from the start until throughput is
// back after the rescale ended; a dip later (a checkpoint's) is not
// counted, nor is one before the start.
func TestRescaleDisruptionIsTheRescalesStretch(t *testing.T) {
	var s []latencySample
	s = append(s, perMs(0, 300*time.Millisecond, 10)...)                    // a dip 300..400 ms, before the start
	s = append(s, perMs(400*time.Millisecond, 500*time.Millisecond, 10)...) // start at 500: 500..560 empty
	s = append(s, perMs(560*time.Millisecond, 580*time.Millisecond, 4)...)  // 560..580 below half
	s = append(s, perMs(580*time.Millisecond, 800*time.Millisecond, 10)...) // back
	s = append(s, perMs(850*time.Millisecond, 2*time.Second, 10)...)        // a later dip 800..850
	c := newFineCurve(s, 2*time.Second, time.Millisecond)
	for _, tc := range []struct {
		name           string
		end, limit     time.Duration
		want, wantSpan time.Duration
	}{
		{name: "ended at once", end: 510 * time.Millisecond, limit: 2 * time.Second, want: 80 * time.Millisecond, wantSpan: 80 * time.Millisecond},
		{name: "ended while back", end: 700 * time.Millisecond, limit: 2 * time.Second, want: 80 * time.Millisecond, wantSpan: 200 * time.Millisecond},
		{name: "ended after the later dip", end: 900 * time.Millisecond, limit: 2 * time.Second, want: 130 * time.Millisecond, wantSpan: 400 * time.Millisecond},
		{name: "cut at the next rescale", end: 510 * time.Millisecond, limit: 540 * time.Millisecond, want: 40 * time.Millisecond, wantSpan: 40 * time.Millisecond},
	} {
		if got, span := c.disruption(500*time.Millisecond, tc.end, tc.limit, 10_000); got != tc.want || span != tc.wantSpan {
			t.Errorf("%s: disruption %v over %v, want %v over %v", tc.name, got, span, tc.want, tc.wantSpan)
		}
	}
}

// TestRescaleDisruptionResolvesMilliseconds: a stall of a few ms is
// measured as such, not as 0 or a whole 10 ms bucket; the sliding window
// smooths stalls shorter than half of it away and shifts longer ones
// without changing their length by more than a step.
func TestRescaleDisruptionResolvesMilliseconds(t *testing.T) {
	stall := func(from, to time.Duration) []latencySample {
		return append(perMs(0, from, 10), perMs(to, time.Second, 10)...)
	}
	for _, tc := range []struct {
		name         string
		from, to     time.Duration
		window, want time.Duration
	}{
		{"4 ms, 1 ms window", 500 * time.Millisecond, 504 * time.Millisecond, time.Millisecond, 4 * time.Millisecond},
		{"4 ms across a 10 ms bucket's edge", 508 * time.Millisecond, 512 * time.Millisecond, time.Millisecond, 4 * time.Millisecond},
		{"4 ms, 10 ms window", 500 * time.Millisecond, 504 * time.Millisecond, 10 * time.Millisecond, 0},
		{"20 ms, 10 ms window", 500 * time.Millisecond, 520 * time.Millisecond, 10 * time.Millisecond, 19 * time.Millisecond},
	} {
		c := newFineCurve(stall(tc.from, tc.to), time.Second, tc.window)
		if got, _ := c.disruption(tc.from, tc.to, time.Second, 10_000); got != tc.want {
			t.Errorf("%s: disruption %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRescaleNoiseIsTheSameMeasureOverSteadyTime: the noise floor is the
// same measure over the steady window, as rescales of the same length
// one after the other: a checkpoint's 8 ms stall in it is 8 ms of noise at
// worst, spread over the placements in the mean; a stall outside it none.
func TestRescaleNoiseIsTheSameMeasureOverSteadyTime(t *testing.T) {
	var s []latencySample
	s = append(s, perMs(0, 300*time.Millisecond, 10)...)
	s = append(s, perMs(308*time.Millisecond, 900*time.Millisecond, 10)...) // 300..308 empty
	s = append(s, perMs(950*time.Millisecond, 2*time.Second, 10)...)        // 900..950 empty: after the window
	c := newFineCurve(s, 2*time.Second, time.Millisecond)
	for _, tc := range []struct{ length, mean time.Duration }{
		// Placements of 1 ms, but the one at 299 ms runs on to the first
		// step back after the stall, 308 ms: 199 + 1 + 592.
		{time.Millisecond, 8 * time.Millisecond / 792},
		{100 * time.Millisecond, time.Millisecond}, // 8 placements
		{500 * time.Millisecond, 4 * time.Millisecond},
	} {
		if mean, worst := c.noise(100*time.Millisecond, 900*time.Millisecond, tc.length, 10_000); worst != 8*time.Millisecond || mean != tc.mean {
			t.Errorf("length %v: noise mean %v, worst %v; want %v and 8ms", tc.length, mean, worst, tc.mean)
		}
	}
	if mean, worst := c.noise(400*time.Millisecond, 900*time.Millisecond, 10*time.Millisecond, 10_000); mean != 0 || worst != 0 {
		t.Errorf("noise over undisturbed time %v (worst %v), want 0", mean, worst)
	}
}

func TestRescaleZeroBuckets(t *testing.T) {
	s := append(steadySamples(0, 200*time.Millisecond, 10), steadySamples(300*time.Millisecond, time.Second, 10)...)
	tl := newTimeline(s, time.Second, rescaleBucket)
	zero, lowest := tl.zeroBuckets(150*time.Millisecond, 350*time.Millisecond) // buckets 1, 2, 3
	if zero != 1 || lowest != 0 {
		t.Fatalf("%d zero buckets, lowest %v records/s; want 1 and 0", zero, lowest)
	}
	zero, lowest = tl.zeroBuckets(500*time.Millisecond, 520*time.Millisecond)
	if zero != 0 || lowest != 1000 {
		t.Fatalf("%d zero buckets, lowest %v records/s; want 0 and 1000", zero, lowest)
	}
}

func TestRescaleLatencySplitsMovedAndUnmovedKeys(t *testing.T) {
	s := []latencySample{
		sampleAt(100*time.Millisecond, 110*time.Millisecond, 7, 0),  // moved, 10 ms, before the window
		sampleAt(200*time.Millisecond, 240*time.Millisecond, 7, 0),  // moved, 40 ms
		sampleAt(210*time.Millisecond, 212*time.Millisecond, 3, 0),  // unmoved, 2 ms
		sampleAt(220*time.Millisecond, 224*time.Millisecond, 3, 0),  // unmoved, 4 ms
		sampleAt(300*time.Millisecond, 1300*time.Millisecond, 3, 0), // due after the window
	}
	got := latencyIn(s, 200*time.Millisecond, 300*time.Millisecond, map[int]bool{7: true})
	if got.Moved.Records != 1 || got.Moved.P50Ms != 40 || got.Moved.P99Ms != 40 {
		t.Errorf("moved %+v, want one record of 40 ms", got.Moved)
	}
	if got.Unmoved.Records != 2 || got.Unmoved.P50Ms != 2 || got.Unmoved.P99Ms != 4 {
		t.Errorf("unmoved %+v, want p50 2 ms and p99 4 ms of 2 records", got.Unmoved)
	}
}

func TestRescaleFirstOutOfARun(t *testing.T) {
	s := []latencySample{sampleAt(0, 50*time.Millisecond, 0, 0), sampleAt(0, 900*time.Millisecond, 0, 1), sampleAt(0, 700*time.Millisecond, 0, 1)}
	if at, ok := firstOut(s, 1); !ok || at != 700*time.Millisecond {
		t.Fatalf("first out of run 1 at %v (%v), want 700ms", at, ok)
	}
	if _, ok := firstOut(s, 2); ok {
		t.Fatal("run 2 delivered nothing, yet firstOut found a record")
	}
}

// TestRescalePlansAreThePlanners: the bench classifies keys by the moves
// of keygroups' Rescale from the job's first table, the planner's fewest
// moves (4 → 5 of 128 groups moves 25, Flink's ranges 62).
func TestRescalePlansAreThePlanners(t *testing.T) {
	for _, c := range []struct{ from, to, moved, back int }{{2, 3, 42, 42}, {4, 5, 25, 25}, {3, 1, 85, 85}} {
		plans, err := rescalePlans(rescaleBenchConfig{From: c.from, To: c.to})
		if err != nil {
			t.Fatal(err)
		}
		if len(plans) != 2 || plans[0].From != c.from || plans[0].To != c.to || plans[1].From != c.to || plans[1].To != c.from {
			t.Fatalf("%d→%d: plans %+v", c.from, c.to, plans)
		}
		if len(plans[0].Moved) != c.moved || len(plans[1].Moved) != c.back {
			t.Errorf("%d→%d→%d moves %d then %d key groups, want %d then %d", c.from, c.to, c.from, len(plans[0].Moved), len(plans[1].Moved), c.moved, c.back)
		}
		if plans[0].Minimum != len(plans[0].Moved) {
			t.Errorf("%d→%d: moved %d, minimum %d", c.from, c.to, len(plans[0].Moved), plans[0].Minimum)
		}
	}
}

func TestRescaleTargetsMetAndMissed(t *testing.T) {
	step := func(zero int, before, during float64, moved, minimum int) rescaleStepResult {
		return rescaleStepResult{ZeroBuckets: zero, Moved: moved, Minimum: minimum,
			Before: keyLatency{Unmoved: latencyFigure{Records: 1, P99Ms: before}}, During: keyLatency{Unmoved: latencyFigure{Records: 1, P99Ms: during}}}
	}
	restore := rescaleCaseResult{DisruptionMs: 400}
	good := rescaleCaseResult{DisruptionMs: 20, Steps: []rescaleStepResult{step(0, 10, 15, 42, 42), step(0, 10, 20, 42, 42)}}
	for _, tg := range rescaleTargets(good, restore) {
		if !tg.Met || tg.AtLeast {
			t.Errorf("good live case: %+v, want met", tg)
		}
	}
	bad := rescaleCaseResult{DisruptionMs: 50, Steps: []rescaleStepResult{step(1, 10, 21, 45, 42)}}
	for _, tg := range rescaleTargets(bad, restore) {
		if tg.Met {
			t.Errorf("bad live case: %+v, want missed", tg)
		}
	}
	none := rescaleCaseResult{Steps: []rescaleStepResult{step(0, 10, 10, 0, 0)}}
	got := rescaleTargets(none, restore)[3]
	if !got.Met || !got.AtLeast || got.Value != 400/ms(fineStep) {
		t.Errorf("live case without disruption: %+v, want met, a lower bound of %v", got, 400/ms(fineStep))
	}
}

func TestPacedSourceEmitsWhatIsDue(t *testing.T) {
	pace := newPacer(1000) // record i due at i ms
	pace.begin()
	pace.start = pace.start.Add(-time.Second) // a second's records are due
	src := &pacedSource{pace: pace, keys: []string{"a", "b", "c"}, instance: 1}
	if err := src.Open(weir.TaskInfo{Parallelism: 2}); err != nil {
		t.Fatal(err)
	}
	buf := make([]rescaleEvent, 4)
	n, done, err := src.Read(buf)
	if err != nil || done || n != 4 {
		t.Fatalf("read %d records (done %v, %v), want 4", n, done, err)
	}
	// Instance 1 of 2 produces the odd indices.
	for k, want := range []struct {
		key string
		due time.Duration
	}{{"b", time.Millisecond}, {"a", 3 * time.Millisecond}, {"c", 5 * time.Millisecond}, {"b", 7 * time.Millisecond}} {
		if buf[k].Key != want.key || time.Duration(buf[k].Due) != want.due {
			t.Errorf("record %d: %+v, want key %s due %v", k, buf[k], want.key, want.due)
		}
	}
	if src.Offset() != 4 {
		t.Fatalf("offset %d, want 4", src.Offset())
	}
	if err := src.SeekTo(1_000_000); err != nil { // index 2000001: due in 2000 s
		t.Fatal(err)
	}
	if n, _, _ := src.Read(buf); n != 0 {
		t.Fatalf("read %d records not yet due", n)
	}
	if err := src.SeekTo(-1); err == nil {
		t.Fatal("a negative offset was taken")
	}
}

func TestBenchRescaleRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--keys", "0"}, {"--rate", "0"}, {"--from", "2", "--to", "2"}, {"--to", "129"}, {"--sleep-ms", "-1"},
		{"--warmup", "150ms"}, {"--steady", "100ms"}, {"--between", "500ms"}, {"--checkpoint-mode", "none"},
		{"--checkpoint-interval", "0s"}, {"--between", "1h"}, {"extra"},
		{"--state-bytes", "-1"}, {"--window", "0s"}, {"--window", "1500us"}, {"--window", "2s"},
	} {
		var stderr bytes.Buffer
		if code := runRescaleBench(context.Background(), args, &bytes.Buffer{}, &stderr); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d (usage)", args, code, cli.ExitUsage)
		}
		if !strings.Contains(stderr.String(), "node bench rescale") {
			t.Errorf("%v: no message naming the problem: %q", args, stderr.String())
		}
	}
}

// TestRescaleFiguresCountFromTheStart: a live rescale that waited for a
// running checkpoint is judged from its start, the checkpoint's end; the
// figures from the request, wait included, are kept beside them.
func TestRescaleFiguresCountFromTheStart(t *testing.T) {
	cfg := rescaleBenchConfig{Warmup: 100 * time.Millisecond, Steady: 900 * time.Millisecond, Between: time.Second, Window: defaultDisruptionWindow}
	var s []latencySample
	s = append(s, steadySamples(0, 1200*time.Millisecond, 10)...) // a stall 1.2 .. 1.45 s: the checkpoint waited for
	s = append(s, steadySamples(1450*time.Millisecond, 3*time.Second, 10)...)
	steps := []rescaleStepResult{{From: 2, To: 3, moment: rescaleMoment{Request: 1100 * time.Millisecond, Start: 1500 * time.Millisecond,
		End: 1510 * time.Millisecond, Moved: map[int]bool{1: true}}}}
	c := caseFigures(caseLive, cfg, s, steps)
	st := c.Steps[0]
	// The 10 ms window sees the stall from 5 ms into it to 5 ms after.
	if st.DisruptionMs != 0 || st.DisruptionFromRequestMs != 250 || st.ZeroBuckets != 0 || st.NoiseMs != 0 {
		t.Fatalf("disruption %v ms, from the request %v ms, %d zero buckets, noise %v ms; want 0, 250, 0 and 0",
			st.DisruptionMs, st.DisruptionFromRequestMs, st.ZeroBuckets, st.NoiseMs)
	}
	if c.SteadyPerS != 1000 || st.TookMs != 410 {
		t.Fatalf("steady %v records/s, took %v ms; want 1000 and 410", c.SteadyPerS, st.TookMs)
	}
	if st.During.Moved.Records == 0 || st.During.Unmoved.Records == 0 || st.During.Unmoved.P99Ms != 5 {
		t.Fatalf("latency during %+v: want records of both kinds due from the start, 5 ms each", st.During)
	}
}

// TestRescaleLatencyBeforeIsEachRescalesOwn: the latency before a rescale is
// of the --steady window before its request, after the warmup and after the
// rescale before it (and its tail): the second rescale is judged against
// the job at its parallelism between the two, not before the first.
func TestRescaleLatencyBeforeIsEachRescalesOwn(t *testing.T) {
	cfg := rescaleBenchConfig{Warmup: 2 * time.Second, Steady: 3 * time.Second, Between: 5 * time.Second}
	steps := []rescaleStepResult{{moment: rescaleMoment{Request: 5 * time.Second, End: 5200 * time.Millisecond}},
		{moment: rescaleMoment{Request: 10 * time.Second, End: 10100 * time.Millisecond}},
		{moment: rescaleMoment{Request: 11 * time.Second, End: 11100 * time.Millisecond}}}
	for i, want := range []time.Duration{2 * time.Second, 7 * time.Second, 10600 * time.Millisecond} {
		if got := beforeFrom(cfg, steps, i); got != want {
			t.Errorf("rescale %d: before from %v, want %v", i, got, want)
		}
	}
	var s []latencySample
	s = append(s, sampleAt(3*time.Second, 3*time.Second+10*time.Millisecond, 1, 0)) // before the first: 10 ms
	s = append(s, sampleAt(8*time.Second, 8*time.Second+40*time.Millisecond, 1, 0)) // between: 40 ms
	s = append(s, sampleAt(12*time.Second, 12*time.Second+time.Millisecond, 1, 0))  // after
	cfg.Window = defaultDisruptionWindow
	c := caseFigures(caseLive, cfg, s, steps[:2])
	if b := c.Steps[0].Before.Unmoved; b.Records != 1 || b.P99Ms != 10 {
		t.Errorf("first rescale's latency before %+v, want one record of 10 ms", b)
	}
	if b := c.Steps[1].Before.Unmoved; b.Records != 1 || b.P99Ms != 40 {
		t.Errorf("second rescale's latency before %+v, want one record of 40 ms", b)
	}
}
