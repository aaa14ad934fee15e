package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
)

// seekSource emits the int64 values below n that are instance modulo its
// parallelism, and can be rewound, so a job can be restored. Its offset is
// the number of values it has emitted.
// With a gate, each value waits for it.
type seekSource struct {
	n, next, inst, p int64
	gate             *gate
}

func (s *seekSource) Open(info plan.TaskInfo) error {
	s.inst, s.p = int64(info.Instance), int64(info.Parallelism)
	return nil
}
func (s *seekSource) Close() error  { return nil }
func (s *seekSource) Offset() int64 { return s.next }
func (s *seekSource) SeekTo(o int64) error {
	if o < 0 || s.inst+o*s.p > s.n+s.p {
		return fmt.Errorf("offset %d outside the %d values", o, s.n)
	}
	s.next = o
	return nil
}
func (s *seekSource) Read(max int, out plan.Output) (int, bool, error) {
	k := 0
	for ; k < max && s.inst+s.next*s.p < s.n; k++ {
		s.gate.pass(s.inst + s.next*s.p)
		emit(out, s.inst+s.next*s.p)
		s.next++
	}
	return k, s.inst+s.next*s.p >= s.n, nil
}

// gate paces a gatedCounter: each record of a value in [from, to) waits for
// a token, until the gate is opened for good.
type gate struct {
	from    int64
	to      int64
	blocked atomic.Int64 // 1 + the last value that waited for a token
	tokens  chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(from, to int64) *gate {
	return &gate{from: from, to: to, tokens: make(chan struct{}), open: make(chan struct{})}
}

func (g *gate) pass(v int64) {
	if g == nil || v < g.from || v >= g.to {
		return
	}
	g.blocked.Store(v + 1)
	select {
	case <-g.tokens:
	case <-g.open:
	}
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// feed hands out one token per tick until the gate opens.
func (g *gate) feed(every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-g.open:
			return
		case <-tick.C:
			select {
			case g.tokens <- struct{}{}:
			case <-g.open:
				return
			}
		}
	}
}

// gatedCounter counts how often it processed each value; its state is those
// counts. It emits nothing. With slowEvery > 0 it works a millisecond every
// slowEvery records, as a slow operator does.
type gatedCounter struct {
	gate      *gate
	slowEvery int64
	seen      []byte
	processed atomic.Int64 // records processed
	snapAt    atomic.Int64 // records processed at the last snapshot (-1: none)
}

func newGatedCounter(n int64, g *gate) *gatedCounter {
	c := &gatedCounter{gate: g, seen: make([]byte, n)}
	c.snapAt.Store(-1)
	return c
}

func (c *gatedCounter) Open(plan.TaskInfo) error { return nil }
func (c *gatedCounter) Close() error             { return nil }
func (c *gatedCounter) Finish(plan.Output) error { return nil }
func (c *gatedCounter) Process(_ int, recs plan.Batch, _ plan.Output) error {
	vs, ok := plan.RecordsOf[int64](recs)
	if !ok {
		return fmt.Errorf("unexpected batch %T", recs)
	}
	for _, v := range vs {
		c.gate.pass(v)
		c.seen[v]++
		if k := c.processed.Add(1); c.slowEvery > 0 && k%c.slowEvery == 0 {
			time.Sleep(time.Millisecond) // the operator's work, not a wait of the test
		}
	}
	return nil
}
func (c *gatedCounter) SnapshotState(id uint64) (plan.Snapshot, error) {
	c.snapAt.Store(c.processed.Load())
	return plan.Snapshot{CheckpointID: id, Operator: append([]byte(nil), c.seen...)}, nil
}
func (c *gatedCounter) RestoreState(s plan.Snapshot) error {
	if len(s.Operator) != len(c.seen) {
		return fmt.Errorf("state of %d values, want %d", len(s.Operator), len(c.seen))
	}
	copy(c.seen, s.Operator)
	var n int64
	for _, k := range c.seen {
		n += int64(k)
	}
	c.processed.Store(n)
	return nil
}

// counterPlan is srcP sources of the values below n → one gated counter
// (an input per source) → sink; counter receives the counter instance the
// job makes.
func counterPlan(name string, srcP int, n int64, g *gate, slowEvery int64, counter *atomic.Pointer[gatedCounter]) *plan.Job {
	return gatedPlan(name, srcP, n, nil, g, slowEvery, counter)
}

// gatedPlan is counterPlan with the sources' values gated by srcGate.
func gatedPlan(name string, srcP int, n int64, srcGate, g *gate, slowEvery int64, counter *atomic.Pointer[gatedCounter]) *plan.Job {
	b := newPlan(name)
	src := b.op("src", plan.KindSource, srcP, func(int) (plan.Instance, error) { return &seekSource{n: n, gate: srcGate}, nil })
	mid := b.op("count", plan.KindTransform, 1, func(int) (plan.Instance, error) {
		c := newGatedCounter(n, g)
		c.slowEvery = slowEvery
		counter.Store(c)
		return c, nil
	})
	sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return discard{}, nil })
	b.connect(src, mid, plan.Rebalance)
	b.connect(mid, sink, plan.Forward)
	return b.job
}

// stopBatch is the batch size of the stop tests: a batch of slow records
// takes seconds.
const stopBatch = 2048

// stopOptions are the options of the stop tests: unaligned checkpoints into a
// fresh local store, none but the stop checkpoint.
func stopOptions(t *testing.T) (*store.Local, Options) {
	t.Helper()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, Options{BatchSize: stopBatch, ChannelCapacity: 4, FlushInterval: time.Millisecond,
		Checkpoint: CheckpointOptions{Mode: barriers.Unaligned, Interval: time.Hour, Timeout: time.Minute, Retain: 2, Store: st}}
}

// stopPaced stops job j while g holds one of its operators, then paces g at
// one record per millisecond until the job has its stop checkpoint or ends,
// opens g, and checks the job stopped well with its stop checkpoint.
func stopPaced(t *testing.T, j *Job, g *gate, reason string) {
	t.Helper()
	j.Stop(reason)
	go g.feed(time.Millisecond)
	ended := func() bool {
		select {
		case <-j.Done():
			return true
		default:
			return false
		}
	}
	poll.Until(flowDeadline, poll.Every, func() bool { return len(j.Checkpoints()) > 0 || ended() })
	g.release()
	if err := waitJob(t, j); err != nil {
		t.Fatalf("stopped job failed: %v", err)
	}
	if len(j.Checkpoints()) == 0 {
		t.Fatal("the job stopped without its stop checkpoint")
	}
	select {
	case <-j.Gone():
	case <-time.After(flowDeadline):
		t.Fatal("the stopped job's actors did not go")
	}
}

// TestBarrierInterruptsSlowBufferBetweenRecords stops a job (an unaligned
// stop checkpoint) while its counter is in the middle of a buffer whose
// records each take a while. The task must answer the barrier between two
// records: the checkpoint completes with the counter's snapshot inside the
// first buffer and the rest of that buffer as channel state, and a job
// restored from it counts every value exactly once. Before, the barrier waited
// until the counter had worked through the whole buffer (and more).
func TestBarrierInterruptsSlowBufferBetweenRecords(t *testing.T) {
	const n = 2 * stopBatch
	st, opts := stopOptions(t)
	var log lockedLog
	node := NewNode(zerolog.New(&log).Level(zerolog.DebugLevel))
	defer node.Shutdown()
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	}()

	g := newGate(10, n)
	defer g.release()
	var counter atomic.Pointer[gatedCounter]
	j, err := node.Submit(counterPlan("interrupt", 1, n, g, 0, &counter), opts)
	if err != nil {
		t.Fatal(err)
	}
	// Let the counter into its first buffer, then stop the job while it waits
	// for the next token; the feeder then paces it at one record per tick.
	if !poll.Until(flowDeadline, poll.Every, func() bool { c := counter.Load(); return c != nil && c.processed.Load() == 10 }) {
		t.Fatal("the counter did not start its first buffer")
	}
	stopPaced(t, j, g, "test stops mid-buffer")
	at := counter.Load().snapAt.Load()
	if at < 10 || at >= stopBatch {
		t.Fatalf("the stop checkpoint's snapshot holds %d processed records; want it inside the first buffer [10, %d): the barrier waited behind the buffer", at, stopBatch)
	}

	m, err := st.Latest(context.Background(), "interrupt")
	if err != nil {
		t.Fatal(err)
	}
	var offset int64 = -1
	channelRecords := 0
	for _, ts := range m.Tasks {
		switch ts.Operator {
		case "src":
			offset = ts.SourceOffset
		case "count":
			for _, c := range ts.Channels {
				channelRecords += c.Records
			}
		}
	}
	// A consistent cut: every record the source read is in the counter's
	// snapshot or in its channel state, once.
	if int64(channelRecords) != offset-at {
		t.Fatalf("source offset %d, counter snapshot %d records, channel state %d records: want offset = snapshot + channel state",
			offset, at, channelRecords)
	}
	t.Logf("stop checkpoint %d: snapshot after %d records, channel state %d records, source offset %d", m.CheckpointID, at, channelRecords, offset)

	// Restore: the channel state replays first, the source goes on from its
	// offset (the end: the final checkpoint is triggered at once). The first
	// 500 replayed records are paced, so the final checkpoint's in-order
	// barrier arrives while the counter replays, in parts; it must be
	// handled once the replay is done.
	ropts := opts
	ropts.Checkpoint.Restore = m
	g2 := newGate(at, at+500)
	defer g2.release()
	go g2.feed(time.Millisecond)
	j2, err := node.Submit(counterPlan("interrupt", 1, n, g2, 0, &counter), ropts)
	if err != nil {
		t.Fatal(err)
	}
	err = waitJob(t, j2)
	g2.release()
	if err != nil {
		t.Fatalf("restored job failed: %v", err)
	}
	var bad []string
	for v, k := range counter.Load().seen {
		if k != 1 && len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("value %d counted %d times", v, k))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("not exactly once after restore: %v", errors.New(fmt.Sprint(bad)))
	}
}

// TestUnalignedCheckpointsMidBufferRestoreExactlyOnce runs a counter with
// two inputs whose buffers take it many milliseconds each, under unaligned
// checkpoints every 2 ms, so barriers keep arriving while a buffer is half
// processed on one input or the other: the snapshot then holds the processed
// part and the rest joins the channel state ahead of what the barrier
// overtook. Restoring the latest and the oldest retained checkpoint must both
// count every value exactly once.
func TestUnalignedCheckpointsMidBufferRestoreExactlyOnce(t *testing.T) {
	const n = 6000
	stateDir := t.TempDir()
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opts := Options{BatchSize: 256, ChannelCapacity: 4, FlushInterval: time.Millisecond,
		Checkpoint: CheckpointOptions{Mode: barriers.Unaligned, Interval: 2 * time.Millisecond, Timeout: time.Minute, Retain: 4, Store: st}}
	var log lockedLog
	node := NewNode(zerolog.New(&log).Level(zerolog.DebugLevel))
	defer node.Shutdown()
	var counter atomic.Pointer[gatedCounter]
	build := func(slowEvery int64) *plan.Job { return counterPlan("interrupt-two", 2, n, nil, slowEvery, &counter) }
	j, err := node.Submit(build(16), opts)
	if err != nil {
		t.Fatal(err)
	}
	ok := poll.Until(flowDeadline, poll.Every, func() bool { return len(j.Checkpoints()) >= 8 })
	j.Stop("enough checkpoints")
	if err := waitJob(t, j); err != nil {
		t.Fatalf("job failed: %v", err)
	}
	if !ok {
		t.Fatalf("only %d checkpoints completed", len(j.Checkpoints()))
	}
	<-j.Gone()
	ids, err := st.List(context.Background(), "interrupt-two")
	if err != nil || len(ids) < 2 {
		t.Fatalf("retained checkpoints %v, %v: want at least two", ids, err)
	}
	parts := strings.Count(log.String(), "rest of a buffer in progress joins the channel state")
	if parts == 0 {
		t.Fatal("no checkpoint caught a buffer half processed: the test did not test that")
	}
	t.Logf("%d checkpoints completed, %d with the rest of a buffer as channel state, %d records processed when stopped; restoring %d and %d",
		len(j.Checkpoints()), parts, counter.Load().processed.Load(), ids[len(ids)-1], ids[0])
	for _, id := range []uint64{ids[len(ids)-1], ids[0]} {
		// Each restore runs on a copy of the store without the checkpoints
		// after id, as the restored run numbers its own after id.
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(stateDir)); err != nil {
			t.Fatal(err)
		}
		rst, err := store.NewLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, later := range ids {
			if later > id {
				if err := rst.Delete(context.Background(), "interrupt-two", later); err != nil {
					t.Fatal(err)
				}
			}
		}
		m, err := rst.Manifest(context.Background(), "interrupt-two", id)
		if err != nil {
			t.Fatal(err)
		}
		ropts := opts
		ropts.Checkpoint.Store, ropts.Checkpoint.Restore = rst, m
		j2, err := node.Submit(build(0), ropts)
		if err != nil {
			t.Fatal(err)
		}
		err = waitJob(t, j2)
		<-j2.Gone()
		rst.Close()
		if err != nil {
			t.Fatalf("restore of checkpoint %d: %v", id, err)
		}
		for v, k := range counter.Load().seen {
			if k != 1 {
				t.Fatalf("restored from checkpoint %d: value %d counted %d times, want once", id, v, k)
			}
		}
	}
}

// TestStopInterruptsSlowSourceBetweenRecords stops a job whose source takes
// a while for each record. The source must take the stop checkpoint's
// trigger after the record it is reading, not after a whole batch: the stop
// checkpoint completes with the source's offset inside its first batch, and
// the restored job counts every value exactly once. Before, the trigger
// waited for the source's whole Read of a batch and the job stopped without
// its stop checkpoint.
func TestStopInterruptsSlowSourceBetweenRecords(t *testing.T) {
	const n = 2 * stopBatch
	st, opts := stopOptions(t)
	node := startNode(t)
	g := newGate(10, n)
	defer g.release()
	var counter atomic.Pointer[gatedCounter]
	j, err := node.Submit(gatedPlan("slow-source", 1, n, g, nil, 0, &counter), opts)
	if err != nil {
		t.Fatal(err)
	}
	// Stop the job while the source waits inside a Read for value 10.
	if !poll.Until(flowDeadline, poll.Every, func() bool { return g.blocked.Load() == 11 }) {
		t.Fatal("the source did not reach value 10")
	}
	stopPaced(t, j, g, "test stops a slow source")
	m, err := st.Latest(context.Background(), "slow-source")
	if err != nil {
		t.Fatal(err)
	}
	var offset int64 = -1
	for _, ts := range m.Tasks {
		if ts.Operator == "src" {
			offset = ts.SourceOffset
		}
	}
	if offset < 10 || offset >= stopBatch {
		t.Fatalf("stop checkpoint %d has source offset %d; want it inside the first batch [10, %d)", m.CheckpointID, offset, stopBatch)
	}
	ropts := opts
	ropts.Checkpoint.Restore = m
	j2, err := node.Submit(counterPlan("slow-source", 1, n, nil, 0, &counter), ropts)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJob(t, j2); err != nil {
		t.Fatalf("restored job failed: %v", err)
	}
	for v, k := range counter.Load().seen {
		if k != 1 {
			t.Fatalf("restored from the stop checkpoint (offset %d): value %d counted %d times, want once", offset, v, k)
		}
	}
	t.Logf("stop checkpoint %d at source offset %d", m.CheckpointID, offset)
}
