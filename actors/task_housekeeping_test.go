package actors

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
)

// TestAlignTimersReleasedWhenCheckpointEnds runs many aligned checkpoints
// with an alignment timeout that never fires through tasks with two inputs:
// each checkpoint arms a timer at its first barrier. A task must let go of a
// timer when its checkpoint ends, so it never holds more than one; before, it
// kept every timer until it stopped.
func TestAlignTimersReleasedWhenCheckpointEnds(t *testing.T) {
	const n = 200000
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := newRecorder(n)
	b := newPlan("timers")
	src := b.source("src", 2, n)
	mid := b.op("map", plan.KindTransform, 2, func(int) (plan.Instance, error) { return identity{}, nil })
	sink := b.op("sink", plan.KindSink, 2, func(instance int) (plan.Instance, error) {
		return &recordingSink{rec: rec, instance: instance, srcP: 2, failAt: -1}, nil
	})
	b.connect(src, mid, plan.Shuffle)
	b.connect(mid, sink, plan.Shuffle)
	opts := Options{BatchSize: 64, ChannelCapacity: 4, FlushInterval: time.Millisecond,
		Checkpoint: CheckpointOptions{Mode: barriers.Aligned, AlignedTimeout: time.Hour, Interval: time.Millisecond,
			Timeout: time.Minute, Retain: 2, Store: st}}
	j, err := startNode(t).Submit(b.job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJob(t, j); err != nil {
		t.Fatalf("job failed: %v", err)
	}
	checkExactlyOnce(t, rec, n, 1)
	done := len(j.Checkpoints())
	if done < 5 {
		t.Fatalf("only %d checkpoints completed: too few to tell", done)
	}
	if held := j.Metrics.MaxAlignTimers.Load(); held > 1 {
		t.Fatalf("a task held %d alignment timers at once over %d checkpoints, want at most 1", held, done)
	}
	t.Logf("%d checkpoints, at most %d timer held", done, j.Metrics.MaxAlignTimers.Load())
}

// lockedLog is a log sink safe for the actors' goroutines.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestSupersededCheckpointIsDeclined injects barrier 5 at one source only and
// then barrier 6 at both, so the map task starts checkpoint 5 on one input and
// sees it superseded by 6. It must decline 5 to the coordinator at once, not
// leave it to time out. (The ids are the test's own, so the job then stops at
// its deadline, not with a stop checkpoint.)
func TestSupersededCheckpointIsDeclined(t *testing.T) {
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var log lockedLog
	node := NewNode(zerolog.New(&log))
	defer node.Shutdown()
	const n = 1 << 40 // runs until stopped
	b := newPlan("supersede")
	src := b.source("src", 2, n)
	mid := b.op("map", plan.KindTransform, 1, func(int) (plan.Instance, error) { return identity{}, nil })
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return discard{}, nil })
	b.connect(src, mid, plan.Shuffle)
	b.connect(mid, sink, plan.Forward)
	opts := Options{BatchSize: 64, ChannelCapacity: 4, FlushInterval: time.Millisecond,
		Checkpoint: CheckpointOptions{Mode: barriers.Unaligned, Interval: time.Hour, Timeout: time.Hour, Retain: 2, Store: st}}
	j, err := node.Submit(b.job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !poll.Until(flowDeadline, poll.Every, func() bool { return j.Metrics.RecordsOut.Load() > 0 }) {
		t.Fatal("no record reached the sink")
	}
	j.mu.Lock()
	jobID := j.pid.Id
	j.mu.Unlock()
	root := node.system.Root
	source := func(i int) *actor.PID { return actor.NewPID(node.system.Address(), fmt.Sprintf("%s/src-%d", jobID, i)) }
	root.Send(source(0), &triggerMsg{id: 5})
	// The sink acknowledges 5 once the map forwarded its barrier: the map is
	// then in checkpoint 5, which only 6 can end.
	sinkAcked := func() bool { return strings.Contains(log.String(), `"checkpoint":5,"task":"sink[0]"`) }
	if !poll.Until(flowDeadline, poll.Every, sinkAcked) {
		t.Fatalf("checkpoint 5 did not reach the sink; log:\n%s", log.String())
	}
	root.Send(source(0), &triggerMsg{id: 6})
	root.Send(source(1), &triggerMsg{id: 6})
	declined := func() bool {
		return strings.Contains(log.String(), `"checkpoint":5,"task":"map[0]","reason":"superseded by checkpoint 6"`)
	}
	ok := poll.Until(flowDeadline, poll.Every, declined)
	j.Stop("test over")
	if err := waitJob(t, j); err != nil {
		t.Fatalf("job failed: %v", err)
	}
	if !ok {
		t.Fatalf("map[0] did not decline superseded checkpoint 5; log:\n%s", log.String())
	}
}
