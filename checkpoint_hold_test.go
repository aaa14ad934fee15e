package weir_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
)

// TestHoldCheckpoints holds a running job's checkpoints (every 5 ms): the
// one in flight ends, no other completes while held, the next completes
// once they go on again, and the job, held again, still ends with its final
// checkpoint.
func TestHoldCheckpoints(t *testing.T) {
	g := weir.NewGraph("hold")
	src := weir.Generate(g, "source", weir.Unbounded, func(i int64) int64 { return i })
	counts := weir.NewValueState[int64](g, "count")
	weir.ToSink(weir.Process(weir.KeyBy(src, func(i int64) int64 { return i % 100 }), "count",
		func(ctx *weir.KeyedContext[int64], i int64, _ *weir.Emitter[struct{}]) error {
			counts.Set(ctx, counts.Get(ctx)+1)
			return nil
		}, weir.WithState(counts)), "sink", weir.DiscardSink[struct{}](nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := make(chan *actors.Job, 1)
	errs := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, g, weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 5 * time.Millisecond,
			Timeout: time.Minute, Retain: 2, StateDir: filepath.Join(t.TempDir(), "state")}),
			weir.WithJobObserver(func(j *actors.Job) { jobs <- j }))
		errs <- err
	}()
	var j *actors.Job
	select {
	case j = <-jobs:
	case err := <-errs:
		t.Fatalf("run ended before the job started: %v", err)
	}
	completed := func() int { return len(j.Checkpoints()) }
	if !poll.Until(endDeadline, time.Millisecond, func() bool { return completed() >= 2 }) {
		t.Fatalf("%d checkpoints completed within %v, want 2", completed(), endDeadline)
	}
	hold := func(on bool) {
		t.Helper()
		if err := j.HoldCheckpoints(ctx, on); err != nil {
			t.Fatal(err)
		}
	}
	hold(true)
	if !poll.Until(endDeadline, time.Millisecond, func() bool { return j.CheckpointsInFlight() == 0 }) {
		t.Fatalf("%d checkpoints still in flight %v after the hold", j.CheckpointsInFlight(), endDeadline)
	}
	held := completed()
	// For 60 intervals no checkpoint may complete; it fails as soon as
	// one does. A machine too busy to tick in that time only makes the
	// check weaker, never fail.
	if poll.Until(300*time.Millisecond, time.Millisecond, func() bool { return completed() != held }) {
		t.Fatalf("%d checkpoints completed while held, want none (completed: %v)", completed()-held, j.Checkpoints()[held:])
	}
	hold(false)
	if !poll.Until(endDeadline, time.Millisecond, func() bool { return completed() > held }) {
		t.Fatalf("no checkpoint completed within %v after the hold ended", endDeadline)
	}
	hold(true)
	j.Drain("test: end of input")
	select {
	case err := <-errs:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(endDeadline):
		t.Fatalf("the held job did not end within %v", endDeadline)
	}
	if err := j.HoldCheckpoints(ctx, false); !errors.Is(err, actors.ErrJobEnded) {
		t.Fatalf("hold of an ended job: %v, want ErrJobEnded", err)
	}
	all := j.Checkpoints()
	if last := all[len(all)-1]; !last.Final {
		t.Fatalf("last checkpoint %+v of the held job is not the final one", last)
	}
}
