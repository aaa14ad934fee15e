package weir_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
)

// TestLiveRescaleMeasuresItsFlow: a keycount job with a slow count stage
// and unaligned checkpoints is rescaled live 2→3→1 through the Go API, each
// time once count has processed 20000 records since the one before: each rescale's result carries the flow
// figures the runtime measured (throughput before and in 100 ms buckets
// during, the wait of records before and of moved and unmoved groups'
// records during), present and sane; never their speed.
func TestLiveRescaleMeasuresItsFlow(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	g, err := keycount.Build(keycount.Config{Records: -1, Keys: 100, Parallelism: 2, Out: out, SleepMs: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var job *actors.Job
	ran := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, g, weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 100 * time.Millisecond,
			StateDir: filepath.Join(t.TempDir(), "state")}), weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); job = j; mu.Unlock() }))
		ran <- err
	}()
	// counted is how many records count has processed (-1: the job has
	// not started).
	counted := func() int64 {
		mu.Lock()
		j := job
		mu.Unlock()
		if j == nil {
			return -1
		}
		var n int64
		for _, f := range j.TaskFigures(time.Now()) {
			if f.Operator == "count" {
				n += f.RecordsIn
			}
		}
		return n
	}
	for _, p := range []int{3, 1} {
		// Records processed outside a rescale before each one: the wait
		// before it is of those.
		from := counted()
		if !poll.Until(60*time.Second, 10*time.Millisecond, func() bool { n := counted(); return n >= 0 && n >= from+20_000 }) {
			t.Fatal("count processed no 20000 records within 60 s")
		}
		rctx, rcancel := context.WithTimeout(ctx, 60*time.Second)
		res, err := job.Rescale(rctx, map[string]int{"count": p})
		rcancel()
		if err != nil {
			t.Fatalf("rescale to %d: %v", p, err)
		}
		f := res.Flow
		if f == nil {
			t.Fatalf("rescale to %d: no flow figures: %+v", p, res)
		}
		t.Logf("rescale to %d: %s", p, f)
		during := f.Moved.Records + f.Unmoved.Records
		switch {
		case f.SteadyPerS <= 0 || f.Before.Records <= 0:
			t.Errorf("rescale to %d: no throughput or wait before it, though count ran: %+v", p, f)
		case f.BeforeMoved.Records <= 0 || f.BeforeUnmoved.Records <= 0:
			t.Errorf("rescale to %d: the wait before it is not split into moved and unmoved groups' records: %+v", p, f)
		case f.Buckets < 1 || f.ZeroBuckets < 0 || f.ZeroBuckets > f.Buckets || f.LowestPerS < 0:
			t.Errorf("rescale to %d: buckets during it: %+v", p, f)
		case during <= 0:
			t.Errorf("rescale to %d: no record's wait measured during it: %+v", p, f)
		}
		for _, l := range []struct {
			name     string
			n        int64
			p50, p99 float64
		}{{"before", f.Before.Records, f.Before.P50Ms, f.Before.P99Ms},
			{"before, moved", f.BeforeMoved.Records, f.BeforeMoved.P50Ms, f.BeforeMoved.P99Ms},
			{"before, unmoved", f.BeforeUnmoved.Records, f.BeforeUnmoved.P50Ms, f.BeforeUnmoved.P99Ms}, {"moved", f.Moved.Records, f.Moved.P50Ms, f.Moved.P99Ms},
			{"unmoved", f.Unmoved.Records, f.Unmoved.P50Ms, f.Unmoved.P99Ms}} {
			if (l.n == 0) != (l.p50 == 0) || l.p50 > l.p99 || l.p99 < 0 {
				t.Errorf("rescale to %d: wait %s: %d records, p50 %v ms, p99 %v ms", p, l.name, l.n, l.p50, l.p99)
			}
		}
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the job did not stop within 60 s of its cancel")
	}
}
