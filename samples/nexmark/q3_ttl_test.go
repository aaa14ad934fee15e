package nexmark

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// q3TTLGenerator makes sellers come from the newest 20 people (the hot
// seller from the newest hundred), so every match happens within about 5 s
// of event time, over 60 s of input.
func q3TTLGenerator(t *testing.T) *Generator {
	t.Helper()
	cfg := DefaultConfig(testSeed)
	cfg.Rate = 1000
	cfg.ActivePeople = 20
	gen, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}

// TestQ3WithinItsTTLLosesNoMatch: state that expires 10 s of event time
// after its record (six times over the input) still gives every match of the
// unbounded join, because sellers are recent people.
func TestQ3WithinItsTTLLosesNoMatch(t *testing.T) {
	gen := q3TTLGenerator(t)
	q3 := func(e weir.Stream[Event]) weir.Stream[NameCityStateID] { return q3Within(e, 10*time.Second) }
	sameSet(t, "q3 with a 10 s TTL", runQueryOn(t, q3, gen.Event, testEvents), refQ3(refEvents(gen, testEvents)))
}

// TestQ3ForgetsExpiredState: with a 1 ms TTL every result is still a true
// match (a part of the unbounded join's output), and once the input has
// ended and the watermark passed every expiry, the final checkpoint holds
// no q3 state: no seller and no waiting auction is kept for good (before
// the TTL, q3 kept every seller in OR, ID and CA and every auction whose
// seller never came: 599 MB after 30 M events).
func TestQ3ForgetsExpiredState(t *testing.T) {
	gen := q3TTLGenerator(t)
	want := map[string]int{}
	for _, r := range refQ3(refEvents(gen, testEvents)) {
		want[q3Key(t, r)]++
	}
	for _, ttl := range []time.Duration{time.Millisecond, 10 * time.Second} {
		got, final := runQ3Checkpointed(t, gen, ttl)
		left := maps.Clone(want)
		for _, r := range got {
			k := q3Key(t, r)
			if left[k] == 0 {
				t.Fatalf("q3 with a %v TTL emitted %s, which the unbounded join does not (or not that often)", ttl, k)
			}
			left[k]--
		}
		if final.StateBytes > q3FinalStateMax {
			t.Fatalf("q3 with a %v TTL: the final checkpoint holds %d bytes of state, want at most %d (no keyed value): expired state was kept",
				ttl, final.StateBytes, q3FinalStateMax)
		}
		t.Logf("%v TTL: %d results; final checkpoint %d state bytes", ttl, len(got), final.StateBytes)
	}
}

// q3FinalStateMax bounds the state of a q3 job holding no keyed value: the
// generator's offsets and the empty tables of key groups that held state
// (4,736 bytes measured; the same run keeping expired state held 166,190).
const q3FinalStateMax = 8 << 10

// runQ3Checkpointed runs q3 with ttl over the test events at parallelism 2
// with checkpoints and returns its output and its final checkpoint.
func runQ3Checkpointed(t *testing.T, gen *Generator, ttl time.Duration) ([]NameCityStateID, weir.CheckpointStat) {
	t.Helper()
	g := weir.NewGraph("nexmark-q3-ttl", weir.WithParallelism(2))
	src := weir.WithTimestamps(weir.Generate(g, "events", testEvents, gen.Event), "timestamps", eventTime, weir.BoundedOutOfOrderness(0))
	var c collector[NameCityStateID]
	weir.ToSink(q3Within(src, ttl), "collect", func(int) weir.Sink[NameCityStateID] { return &c })
	cp := weir.DefaultCheckpointConfig()
	cp.StateDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := weir.Run(ctx, g, weir.WithCheckpoints(cp))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checkpoints) == 0 || !res.Checkpoints[len(res.Checkpoints)-1].Final {
		t.Fatalf("checkpoints %+v: no final checkpoint", res.Checkpoints)
	}
	return c.recs, res.Checkpoints[len(res.Checkpoints)-1]
}

func q3Key(t *testing.T, r NameCityStateID) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
