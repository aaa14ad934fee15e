package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
)

// stampedAt is a record at event time At seconds.
type stampedAt struct {
	Name string
	At   int64
}

// lateInput: f opens window [0,10); a at 100 s moves the watermark past
// 20 s; b at 12 s comes after that watermark and is late.
var lateInput = []stampedAt{{"f", 1}, {"a", 100}, {"b", 12}}

// oneAtATime is a source that reads one record per call; after the last it
// ends, or with idle set waits for more that never come.
type oneAtATime struct {
	next int
	idle bool
}

func (s *oneAtATime) Open(weir.TaskInfo) error { return nil }
func (s *oneAtATime) Close() error             { return nil }
func (s *oneAtATime) Offset() int64            { return int64(s.next) }
func (s *oneAtATime) SeekTo(o int64) error     { s.next = int(o); return nil }
func (s *oneAtATime) Read(buf []stampedAt) (int, bool, error) {
	if s.next >= len(lateInput) {
		return 0, !s.idle, nil
	}
	buf[0] = lateInput[s.next]
	s.next++
	return 1, false, nil
}

// lateJob counts lateInput per 10 s tumbling window into out. With gate
// set, counting f waits for the gate, so that a, with the watermark it
// raised, and b wait in the window's input channel meanwhile.
func lateJob(out string, idle bool, gate <-chan struct{}, blocked *sync.Once, started chan<- struct{}) (*weir.Graph, *weir.LateRecords[stampedAt]) {
	g := weir.NewGraph("late-replay")
	src := weir.FromSource(g, "source", func(int) weir.Source[stampedAt] { return &oneAtATime{idle: idle} })
	timed := weir.WithTimestamps(src, "timestamps", func(r stampedAt) time.Time { return time.Unix(r.At, 0) },
		weir.BoundedOutOfOrderness(0))
	w := weir.Window(weir.KeyBy(timed, func(stampedAt) string { return "all" }), weir.Tumbling(10*time.Second))
	count := weir.Count[stampedAt]()
	add := count.Add
	count.Add = func(n int64, r stampedAt) int64 {
		if gate != nil && r.Name == "f" {
			blocked.Do(func() { close(started) })
			<-gate
		}
		return add(n, r)
	}
	counts := weir.Aggregate(w, "count", count)
	text := weir.Map(counts, "format", func(r weir.WindowResult[string, int64]) string {
		return fmt.Sprintf("[%d,%d): %d", r.Start.Unix(), r.End.Unix(), r.Value)
	})
	weir.ToSink(text, "out", weir.FileSink[string](out))
	return g, w.Late()
}

// TestReplayedChannelStateKeepsLateness: an unaligned checkpoint captures,
// in the window's input channel, the buffer whose watermark made the next
// record late, and that record; restoring that checkpoint gives the same
// windows and the same late count as the undisturbed run. Before channel
// state kept watermarks, the replay lost a's watermark and b was counted
// in a window [10,20) the undisturbed run never had.
func TestReplayedChannelStateKeepsLateness(t *testing.T) {
	rt := weir.WithRuntime(weir.RuntimeOptions{BatchSize: 1}) // one record per buffer
	dir := t.TempDir()
	undisturbed := filepath.Join(dir, "undisturbed.txt")
	g, late := lateJob(undisturbed, false, nil, nil, nil)
	if _, err := weir.Run(context.Background(), g, rt); err != nil {
		t.Fatal(err)
	}
	want, wantLate := readFile(t, undisturbed), late.Dropped()
	if wantLate != 1 || !strings.Contains(want, "[0,10): 1") || strings.Contains(want, "[10,20)") {
		t.Fatalf("undisturbed run: %q with %d late, want b dropped as late", want, wantLate)
	}

	for attempt := 1; ; attempt++ {
		out, stateDir := filepath.Join(dir, fmt.Sprintf("out-%d.txt", attempt)), filepath.Join(dir, fmt.Sprintf("state-%d", attempt))
		cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 10 * time.Millisecond, StateDir: stateDir, Retain: 100}
		id := captureLateInFlight(t, out, cc, rt)
		if id == 0 {
			if attempt == 5 {
				t.Fatal("in 5 runs no checkpoint captured a and b in the window's input channel")
			}
			continue
		}
		g, late := lateJob(out, false, nil, nil, nil)
		if _, err := weir.Run(context.Background(), g, rt, weir.WithCheckpoints(cc), weir.WithRestore(fmt.Sprint(id))); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, out); got != want || late.Dropped() != wantLate {
			t.Fatalf("restored from checkpoint %d: %q with %d late, want the undisturbed %q with %d late", id, got, late.Dropped(), want, wantLate)
		}
		return
	}
}

// captureLateInFlight runs lateJob with f's count held until a checkpoint's
// barrier has passed the timestamps operator, and returns the id of a
// checkpoint that captured at least two buffers (a and b) in flight, or 0.
func captureLateInFlight(t *testing.T, out string, cc weir.CheckpointConfig, rt weir.RunOption) uint64 {
	t.Helper()
	gate, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	g, _ := lateJob(out, true, gate, &once, started)
	jobs := make(chan *actors.Job, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var res *weir.Result
	go func() {
		var err error
		res, err = weir.Run(ctx, g, rt, weir.WithCheckpoints(cc), weir.WithJobObserver(func(j *actors.Job) { jobs <- j }))
		done <- err
	}()
	var openGate sync.Once
	fail := func(what string) {
		openGate.Do(func() { close(gate) })
		cancel()
		<-done
		t.Fatalf("no %s within 30 s", what)
	}
	job := <-jobs
	<-started
	// The source and the timestamps operator acknowledged a checkpoint: its
	// barrier is on its way to the blocked window task, ahead of a and b.
	if !poll.Until(30*time.Second, poll.Every, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		d, err := job.Dump(ctx)
		return err == nil && d.Coordinator != nil && d.Coordinator.PendingCheckpoint != 0 && d.Coordinator.Acks >= 2
	}) {
		fail("checkpoint acknowledged upstream of the blocked window")
	}
	openGate.Do(func() { close(gate) })
	var id uint64
	if !poll.Until(30*time.Second, poll.Every, func() bool {
		cps := job.Checkpoints()
		for _, c := range cps {
			if c.InflightBuffers >= 2 {
				id = c.ID
				return true
			}
		}
		return len(cps) > 3
	}) {
		fail("checkpoint completed after the window went on")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d checkpoints; restoring %d", len(res.Checkpoints), id)
	return id
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
