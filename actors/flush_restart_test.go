package actors

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
)

// trickleSource emits one record per tick of its clock, without end: a
// source whose records arrive slowly, so buffers fill only through flushes.
type trickleSource struct {
	every time.Duration
	clock *time.Ticker
	next  int64
}

func (s *trickleSource) Open(plan.TaskInfo) error {
	s.clock = time.NewTicker(s.every)
	return nil
}
func (s *trickleSource) Close() error         { s.clock.Stop(); return nil }
func (s *trickleSource) Offset() int64        { return s.next }
func (s *trickleSource) SeekTo(o int64) error { s.next = o; return nil }

func (s *trickleSource) Read(_ int, out plan.Output) (int, bool, error) {
	<-s.clock.C
	emit(out, s.next)
	s.next++
	return 1, false, nil
}

// countingSink counts the records written to it.
type countingSink struct{ n *atomic.Int64 }

func (s countingSink) Open(plan.TaskInfo) error { return nil }
func (s countingSink) Close() error             { return nil }
func (s countingSink) Finish() error            { return nil }
func (s countingSink) Write(b plan.Batch) error {
	s.n.Add(int64(b.Len()))
	return nil
}

// TestRestartedTasksAreFlushed: partly filled buffers are sealed every flush
// interval, also by tasks that a region restart spawned anew (the ticker
// addresses tasks by their actor names, which a respawn keeps); otherwise a
// slow source's records would wait for a full buffer (here: over a minute).
func TestRestartedTasksAreFlushed(t *testing.T) {
	n := startNode(t)
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	b := newPlan("flush-after-restart")
	src := b.op("src", plan.KindSource, 1, func(int) (plan.Instance, error) {
		return &trickleSource{every: time.Millisecond}, nil
	})
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return countingSink{&written}, nil })
	b.connect(src, sink, plan.Forward)
	opts := Options{BatchSize: 1 << 16, FlushInterval: 2 * time.Millisecond, ChannelCapacity: 4, DeliveryWindow: 4,
		Checkpoint:  CheckpointOptions{Mode: barriers.Unaligned, Interval: time.Hour, Timeout: time.Hour, Retain: 2, Store: st},
		Supervision: DefaultSupervisionOptions()}
	j, err := n.Submit(b.job, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Stop("test over") })
	if !poll.Until(shellDeadline, time.Millisecond, func() bool { return written.Load() >= 3 }) {
		t.Fatalf("no flushed record reached the sink within %v", shellDeadline)
	}
	j.mu.Lock()
	sinkPID := actor.NewPID(j.pid.Address, j.pid.Id+"/sink-0")
	j.mu.Unlock()
	n.system.Root.Stop(sinkPID)
	if !poll.Until(shellDeadline, time.Millisecond, func() bool { return j.Supervision().Restarts >= 1 }) {
		t.Fatalf("the region did not restart within %v", shellDeadline)
	}
	after := written.Load()
	if !poll.Until(shellDeadline, time.Millisecond, func() bool { return written.Load() >= after+3 }) {
		t.Fatalf("after the restart no flushed record reached the sink within %v (%d written before)", shellDeadline, after)
	}
}
