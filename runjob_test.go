package weir_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/graphplan"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// runKeycountToEnd runs keycount (n records, k keys, parallelism 2, a slow
// stage) with cfg and st on a fresh actor node, tuned by tune (nil: as
// RuntimeFor made it), and returns the job once it ended without error
// within 2 minutes.
func runKeycountToEnd(t *testing.T, cfg weir.RunConfig, st store.Store, log zerolog.Logger, out string, n int64, k int, tune func(*actors.Options)) *actors.Job {
	t.Helper()
	return runKeycountSeen(t, cfg, st, log, out, n, k, tune, nil)
}

// runKeycountSeen is runKeycountToEnd that hands the job to submitted, when
// not nil, as soon as it is submitted.
func runKeycountSeen(t *testing.T, cfg weir.RunConfig, st store.Store, log zerolog.Logger, out string, n int64, k int, tune func(*actors.Options), submitted func(*actors.Job)) *actors.Job {
	t.Helper()
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	p, err := graphplan.Of(g)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rt, err := weir.RuntimeFor(ctx, g, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(&rt)
	}
	node := actors.NewNode(log)
	defer node.Shutdown()
	job, err := node.Submit(p, rt)
	if err != nil {
		t.Fatal(err)
	}
	if submitted != nil {
		submitted(job)
	}
	select {
	case <-job.Done():
	case <-ctx.Done():
		t.Fatal("job did not end within 2 minutes")
	}
	if err := job.Err(); err != nil {
		t.Fatalf("job: %v", err)
	}
	return job
}
