package weir_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/rescale"
)

// endDeadline bounds each wait of the end-of-input rescale tests.
const endDeadline = 30 * time.Second

// endCount is what the end-of-input tests' count stage emits.
type endCount struct {
	Key   int64
	Count int64
}

// gatedSink collects counts; Write (or Finish) blocks until its gate opens.
type gatedSink struct {
	mu          sync.Mutex
	got         []endCount
	gate        chan struct{}
	blockWrite  bool
	blockFinish bool
}

func (s *gatedSink) Open(weir.TaskInfo) error { return nil }
func (s *gatedSink) Write(b []endCount) error {
	if s.blockWrite {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, b...)
	return nil
}
func (s *gatedSink) Finish() error {
	if s.blockFinish {
		<-s.gate
	}
	return nil
}
func (s *gatedSink) Close() error { return nil }

// verify checks that every key's counts are 1..n/k, each once and in order.
func (s *gatedSink) verify(t *testing.T, n, k int64) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[int64]int64{}
	for _, c := range s.got {
		if c.Count != next[c.Key]+1 {
			t.Fatalf("key %d: count %d after %d", c.Key, c.Count, next[c.Key])
		}
		next[c.Key] = c.Count
	}
	for key := int64(0); key < k; key++ {
		if next[key] != n/k {
			t.Fatalf("key %d: counted to %d, want %d", key, next[key], n/k)
		}
	}
}

// logWatch is a log writer that tells when a line containing want is
// written.
type logWatch struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (w *logWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.want)) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// coordinatorOf is the job coordinator's part of a dump; it does not wait
// for tasks that are blocked.
func coordinatorOf(j *actors.Job) *actors.CoordinatorDump {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	d, err := j.Dump(ctx)
	if err != nil || d == nil {
		return nil
	}
	return d.Coordinator
}

// runGatedCount runs source(2) → count(2, keyed) → sink with checkpoints
// only at the end of input (the interval is an hour), logging to log; it
// returns the job once it runs and a channel with Run's error.
func runGatedCount(t *testing.T, sink *gatedSink, n, k int64, log zerolog.Logger) (*actors.Job, <-chan error) {
	t.Helper()
	g := weir.NewGraph("end-of-input")
	src := weir.Generate(g, "source", n, func(i int64) int64 { return i }, weir.Parallelism(2))
	counts := weir.NewValueState[int64](g, "count")
	out := weir.Process(weir.KeyBy(src, func(i int64) int64 { return i % k }), "count",
		func(ctx *weir.KeyedContext[int64], i int64, out *weir.Emitter[endCount]) error {
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(endCount{Key: i % k, Count: c})
			return nil
		}, weir.WithState(counts), weir.Parallelism(2))
	weir.ToSink(out, "sink", func(int) weir.Sink[endCount] { return sink })
	jobs := make(chan *actors.Job, 1)
	errs := make(chan error, 1)
	go func() {
		_, err := weir.Run(context.Background(), g, weir.WithLogger(log),
			weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Hour, Timeout: time.Hour, Retain: 2,
				StateDir: filepath.Join(t.TempDir(), "state")}),
			weir.WithJobObserver(func(j *actors.Job) { jobs <- j }))
		errs <- err
	}()
	select {
	case j := <-jobs:
		return j, errs
	case err := <-errs:
		t.Fatalf("run ended before the job started: %v", err)
	case <-time.After(endDeadline):
		t.Fatalf("the job did not start within %v", endDeadline)
	}
	return nil, nil
}

// waitFor polls the coordinator until cond holds.
func waitFor(t *testing.T, j *actors.Job, what string, cond func(*actors.CoordinatorDump) bool) {
	t.Helper()
	var view *actors.CoordinatorDump
	if !poll.Until(endDeadline, 5*time.Millisecond, func() bool {
		view = coordinatorOf(j)
		return view != nil && cond(view)
	}) {
		t.Fatalf("%s: not within %v: %+v", what, endDeadline, view)
	}
}

// TestRescaleWaitingForTheFinalCheckpointIsRefused requests a rescale of
// count while the final checkpoint is in flight (every source read all its
// input; the sink, blocked, has not acknowledged it): the rescale waits for
// it, and when it completes the rescale is refused with ErrInputEnded —
// nothing spawned — and the job finishes, exactly once. Before, the rescale
// started after the final checkpoint, into sources that were finishing.
func TestRescaleWaitingForTheFinalCheckpointIsRefused(t *testing.T) {
	const n, k = 400, 10
	sink := &gatedSink{gate: make(chan struct{}), blockWrite: true}
	var release sync.Once
	open := func() { release.Do(func() { close(sink.gate) }) }
	t.Cleanup(open)
	watch := &logWatch{want: "rescale waits for the checkpoint", seen: make(chan struct{})}
	j, errs := runGatedCount(t, sink, n, k, zerolog.New(watch))
	waitFor(t, j, "final checkpoint in flight with every source idle", func(c *actors.CoordinatorDump) bool {
		return c.IdleSources == 2 && c.PendingCheckpoint != 0 && !c.FinalDone
	})
	rescaled := make(chan error, 1)
	go func() {
		_, err := j.Rescale(context.Background(), map[string]int{"count": 3})
		rescaled <- err
	}()
	select {
	case <-watch.seen:
	case err := <-rescaled:
		t.Fatalf("the rescale returned before waiting for the final checkpoint: %v", err)
	case <-time.After(endDeadline):
		t.Fatalf("the rescale did not wait for the final checkpoint within %v", endDeadline)
	}
	open()
	select {
	case err := <-rescaled:
		if !errors.Is(err, rescale.ErrInputEnded) {
			t.Fatalf("rescale: %v, want an error wrapping %q", err, rescale.ErrInputEnded)
		}
		t.Logf("rescale: %v", err)
	case <-time.After(endDeadline):
		t.Fatalf("the rescale got no answer within %v", endDeadline)
	}
	if err := <-errs; err != nil {
		t.Fatalf("run: %v", err)
	}
	sink.verify(t, n, k)
}

// TestRescaleAfterTheFinalCheckpointIsRefused requests a rescale once the
// final checkpoint has completed while the job has not ended (the sink is
// still finishing): it is refused at once with ErrInputEnded, and the job
// finishes, exactly once.
func TestRescaleAfterTheFinalCheckpointIsRefused(t *testing.T) {
	const n, k = 400, 10
	sink := &gatedSink{gate: make(chan struct{}), blockFinish: true}
	var release sync.Once
	open := func() { release.Do(func() { close(sink.gate) }) }
	t.Cleanup(open)
	j, errs := runGatedCount(t, sink, n, k, zerolog.Nop())
	waitFor(t, j, "final checkpoint completed", func(c *actors.CoordinatorDump) bool { return c.FinalDone && !c.Ended })
	ctx, cancel := context.WithTimeout(context.Background(), endDeadline)
	defer cancel()
	_, err := j.Rescale(ctx, map[string]int{"count": 3})
	if !errors.Is(err, rescale.ErrInputEnded) || !strings.Contains(err.Error(), "final checkpoint") {
		t.Fatalf("rescale: %v, want an error wrapping %q", err, rescale.ErrInputEnded)
	}
	t.Logf("rescale: %v", err)
	open()
	if err := <-errs; err != nil {
		t.Fatalf("run: %v", err)
	}
	sink.verify(t, n, k)
}
