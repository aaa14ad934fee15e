package weir_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/samples/keycount"
)

// TestLiveRescaleIsCountedAndOnTheTimeline: each committed live rescale
// feeds weir_rescale_key_groups_moved_total and weir_rescale_seconds for the
// operator, and is an event of the job (the web page's timeline).
func TestLiveRescaleIsCountedAndOnTheTimeline(t *testing.T) {
	const n, k = 80_000, 40
	out := filepath.Join(t.TempDir(), "out.jsonl")
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.New()
	var mu sync.Mutex
	var job *actors.Job
	res, err := weir.Run(context.Background(), g, countTo3To1To4(50*time.Millisecond), weir.WithMetrics(reg),
		weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); job = j; mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, r := range res.Rescales {
		if r.Err != "" {
			t.Fatalf("rescale %d: %s", r.Step, r.Err)
		}
		moved += r.Moved
	}
	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	var observed uint64
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "weir_rescale_key_groups_moved_total":
				total += m.GetCounter().GetValue()
			case "weir_rescale_seconds":
				observed += m.GetHistogram().GetSampleCount()
			}
		}
	}
	if int(total) != moved || moved == 0 {
		t.Errorf("weir_rescale_key_groups_moved_total %v, want the %d groups the rescales moved", total, moved)
	}
	if observed != 3 {
		t.Errorf("weir_rescale_seconds has %d observations, want 3 (one per rescale of count)", observed)
	}
	mu.Lock()
	defer mu.Unlock()
	rescales := 0
	for _, e := range job.Events() {
		if e.Kind == actors.EventRescale {
			rescales++
		}
	}
	if rescales != 3 {
		t.Errorf("%d rescale events on the job's timeline, want 3: %+v", rescales, job.Events())
	}
}
