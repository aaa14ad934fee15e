package weir_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// stallingSource emits one reading and then nothing until release is
// closed, then ends.
type stallingSource struct {
	release <-chan struct{}
	pos     int64
}

func (s *stallingSource) Open(weir.TaskInfo) error { return nil }
func (s *stallingSource) Close() error             { return nil }
func (s *stallingSource) Offset() int64            { return s.pos }
func (s *stallingSource) SeekTo(o int64) error     { s.pos = o; return nil }
func (s *stallingSource) Read(buf []reading) (int, bool, error) {
	if s.pos == 0 {
		buf[0] = reading{Sensor: "s0", TS: time.Unix(1_700_000_000, 0).UnixMilli()}
		s.pos = 1
		return 1, false, nil
	}
	<-s.release // a source with nothing to read
	return 0, true, nil
}

// firedSink counts window results and closes release once it has seen want
// of them, while the stalled input still has not ended.
type firedSink struct {
	seen    *atomic.Int64
	want    int64
	once    *sync.Once
	release chan struct{}
}

func (s *firedSink) Open(weir.TaskInfo) error { return nil }
func (s *firedSink) Finish() error            { return nil }
func (s *firedSink) Close() error             { return nil }
func (s *firedSink) Write(b []weir.WindowResult[string, int64]) error {
	if s.seen.Add(int64(len(b))) >= s.want {
		s.once.Do(func() { close(s.release) })
	}
	return nil
}

// TestIdleInputDoesNotHoldBackWatermark: a union of a steady input and one
// that stalls after its first record. With IdleAfter on the stalled one,
// its consumers leave it out of their watermark, and windows of the steady
// input fire while it is still open (without idleness they could not: the
// stalled input would hold the watermark at its first record, and the job
// would wait for the release until the test's deadline).
func TestIdleInputDoesNotHoldBackWatermark(t *testing.T) {
	const n, want = 20000, 20
	release := make(chan struct{})
	var once sync.Once
	deadline := time.AfterFunc(60*time.Second, func() { once.Do(func() { close(release) }) })
	defer deadline.Stop()
	g := weir.NewGraph("idle")
	ts := func(r reading) time.Time { return time.UnixMilli(r.TS) }
	steady := weir.WithTimestamps(weir.Generate(g, "steady", n, func(i int64) reading { return makeReading(1, i) }), "steady-ts", ts,
		weir.BoundedOutOfOrderness(readingDisorder))
	stalled := weir.WithTimestamps(weir.FromSource(g, "stalled", func(int) weir.Source[reading] { return &stallingSource{release: release} }),
		"stalled-ts", ts, weir.IdleAfter(20*time.Millisecond))
	all := weir.Union("all", steady, stalled)
	counts := weir.Aggregate(weir.Window(weir.KeyBy(all, func(r reading) string { return r.Sensor }), weir.Tumbling(time.Second)),
		"counts", weir.Count[reading]())
	var seen atomic.Int64
	released := make(chan bool, 1)
	weir.ToSink(counts, "sink", func(int) weir.Sink[weir.WindowResult[string, int64]] {
		return &firedSink{seen: &seen, want: want, once: &once, release: release}
	})
	go func() {
		<-release
		released <- deadline.Stop() // true: released by the sink, before the deadline
	}()
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if !<-released {
		t.Fatalf("no %d windows fired while an input was idle: the idle input held the watermark back", want)
	}
}
