package actors

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// maxOutboxBound is the most sealed buffers a producer can hold for one channel.
// A task checks outputs.blocked before every unit of work (one source Read of
// BatchSize records, or one input buffer of at most BatchSize records through an
// operator that emits one record per input), so a unit starts with every outbox
// empty and fills at most one buffer per channel (broadcast included). After that
// the task does no work until the outbox drains; only a flush (tick or end of
// input) can still seal the partial buffer, and that empties it. Hence 1 + 1.
const maxOutboxBound = 2

// flowDeadline bounds every wait in these tests.
const flowDeadline = 60 * time.Second

// --- test operators ------------------------------------------------------------

// counterSource emits the int64 values instance, instance+p, … below n.
type counterSource struct {
	n, next, p int64
	failAt     int64 // Read fails once next reaches failAt (0: never)
}

func (s *counterSource) Open(info plan.TaskInfo) error {
	s.p = int64(info.Parallelism)
	s.next = int64(info.Instance)
	return nil
}
func (s *counterSource) Close() error  { return nil }
func (s *counterSource) Offset() int64 { return s.next }
func (s *counterSource) SeekTo(int64) error {
	return errors.New("counterSource cannot seek")
}

// emit writes one int64 record to every output edge.
func emit(out plan.Output, v int64) {
	for _, w := range out.Writers() {
		w.(*plan.Writer[int64]).Write(v)
	}
}

func (s *counterSource) Read(max int, out plan.Output) (int, bool, error) {
	n := 0
	for ; n < max && s.next < s.n; n++ {
		if s.failAt > 0 && s.next >= s.failAt {
			return n, false, errSourceBroken
		}
		emit(out, s.next)
		s.next += s.p
	}
	return n, s.next >= s.n, nil
}

var errSourceBroken = errors.New("source broken")

// identity passes records through, one output per input record.
type identity struct{}

func (identity) Open(plan.TaskInfo) error { return nil }
func (identity) Close() error             { return nil }
func (identity) Process(_ int, recs plan.Batch, out plan.Output) error {
	vs, _ := plan.RecordsOf[int64](recs)
	for _, r := range vs {
		emit(out, r)
	}
	return nil
}
func (identity) Finish(plan.Output) error { return nil }

// recorder collects what every sink instance of a job received.
type recorder struct {
	seen     []atomic.Int32 // seen[v]: how many times value v arrived
	count    atomic.Int64
	sum      atomic.Int64
	gate     chan struct{} // when non-nil, Write waits until it is closed
	writing  atomic.Int64  // sink Writes entered (the gated one included)
	mu       sync.Mutex
	problems []string
}

func newRecorder(n int64) *recorder { return &recorder{seen: make([]atomic.Int32, n)} }

func (r *recorder) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) < 10 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

// recordingSink checks and records the records reaching one sink instance.
type recordingSink struct {
	rec      *recorder
	instance int
	srcP     int64
	// ordered: records from one source instance reach this sink over a single
	// channel, so they must arrive in increasing order.
	ordered bool
	last    map[int64]int64
	// allowed, when set, says whether value v may reach this instance.
	allowed func(v int64, instance int) bool
	failAt  int64 // Write fails on a batch holding value failAt (-1: never)
}

func (s *recordingSink) Open(plan.TaskInfo) error {
	s.last = map[int64]int64{}
	return nil
}
func (s *recordingSink) Close() error  { return nil }
func (s *recordingSink) Finish() error { return nil }

func (s *recordingSink) Write(b plan.Batch) error {
	s.rec.writing.Add(1)
	if s.rec.gate != nil {
		<-s.rec.gate
	}
	recs, ok := plan.RecordsOf[int64](b)
	if !ok {
		s.rec.problem("sink %d: unexpected batch %T", s.instance, b)
	}
	for _, v := range recs {
		if v < 0 || v >= int64(len(s.rec.seen)) {
			s.rec.problem("sink %d: unexpected record %d", s.instance, v)
			continue
		}
		if v == s.failAt {
			return fmt.Errorf("sink refuses %d", v)
		}
		s.rec.seen[v].Add(1)
		s.rec.count.Add(1)
		s.rec.sum.Add(v)
		if s.allowed != nil && !s.allowed(v, s.instance) {
			s.rec.problem("sink %d: value %d routed here", s.instance, v)
		}
		if s.ordered {
			src := v % s.srcP
			if last, ok := s.last[src]; ok && v <= last {
				s.rec.problem("sink %d: value %d from source %d after %d", s.instance, v, src, last)
			}
			s.last[src] = v
		}
	}
	return nil
}

// --- plans ----------------------------------------------------------------------

// planBuilder assembles a plan.Job by hand.
type planBuilder struct{ job *plan.Job }

func newPlan(name string) *planBuilder {
	return &planBuilder{job: &plan.Job{Name: name, MaxParallelism: 128}}
}

func (b *planBuilder) op(name string, kind plan.Kind, p int, mk func(instance int) (plan.Instance, error)) *plan.Operator {
	o := &plan.Operator{ID: len(b.job.Operators), Name: name, Kind: kind, Parallelism: p, New: mk}
	b.job.Operators = append(b.job.Operators, o)
	return o
}

func (b *planBuilder) connect(from, to *plan.Operator, part plan.Partitioner) *plan.Edge {
	pool := plan.NewPool[int64]()
	e := &plan.Edge{ID: len(b.job.Edges), From: from, To: to, Partitioner: part, Codec: plan.MsgpackCodec[int64]{},
		NewWriter: func(cfg plan.WriterConfig) (plan.EdgeWriter, error) {
			return plan.NewWriter(cfg, keygroups.HashKey[int64], pool)
		}, Recycle: pool.Recycle}
	b.job.Edges = append(b.job.Edges, e)
	from.Outputs = append(from.Outputs, e)
	to.Inputs = append(to.Inputs, e)
	return e
}

func (b *planBuilder) source(name string, p int, n int64) *plan.Operator {
	return b.op(name, plan.KindSource, p, func(int) (plan.Instance, error) {
		return &counterSource{n: n}, nil
	})
}

// topology is one shape of the flow tests.
type topology struct {
	name      string
	srcP      int
	midP      int // 0: no middle operator
	sinkP     int
	part      plan.Partitioner // source → (middle or sink)
	copies    int              // times each record reaches the sinks
	ordered   bool
	allowed   func(srcP, sinkP int) func(v int64, instance int) bool
	channelsN int // channels out of each source instance
}

var topologies = []topology{
	{name: "forward-1to1", srcP: 1, sinkP: 1, part: plan.Forward, copies: 1, ordered: true,
		allowed: func(srcP, _ int) func(int64, int) bool {
			return func(v int64, k int) bool { return v%int64(srcP) == int64(k) }
		}},
	{name: "rebalance-2to3", srcP: 2, sinkP: 3, part: plan.Rebalance, copies: 1, ordered: true,
		// Source j sends its m-th record (v = j + m·srcP) to channel (j + m) mod sinkP.
		allowed: func(srcP, sinkP int) func(int64, int) bool {
			return func(v int64, k int) bool {
				j, m := v%int64(srcP), v/int64(srcP)
				return (j%int64(sinkP)+m)%int64(sinkP) == int64(k)
			}
		}},
	{name: "shuffle-3to2", srcP: 3, sinkP: 2, part: plan.Shuffle, copies: 1, ordered: true},
	{name: "broadcast-2to3", srcP: 2, sinkP: 3, part: plan.Broadcast, copies: 3, ordered: true},
	{name: "hash-2to3", srcP: 2, sinkP: 3, part: plan.KeyGroupHash, copies: 1, ordered: true,
		allowed: func(_, sinkP int) func(int64, int) bool {
			table, err := keygroups.Contiguous(128, sinkP)
			if err != nil {
				panic(err)
			}
			return func(v int64, k int) bool { return table.Owner(keygroups.KeyGroup(v, 128)) == k }
		}},
	{name: "shuffle-2to3-map-rebalance-to2", srcP: 2, midP: 3, sinkP: 2, part: plan.Shuffle, copies: 1},
}

// build makes the plan of a topology for n records, recording into rec.
func (tp topology) build(name string, n int64, rec *recorder) *plan.Job {
	b := newPlan(name)
	src := b.source("src", tp.srcP, n)
	var mid *plan.Operator
	if tp.midP > 0 {
		mid = b.op("map", plan.KindTransform, tp.midP, func(int) (plan.Instance, error) { return identity{}, nil })
	}
	var allowed func(int64, int) bool
	if tp.allowed != nil {
		allowed = tp.allowed(tp.srcP, tp.sinkP)
	}
	sink := b.op("sink", plan.KindSink, tp.sinkP, func(instance int) (plan.Instance, error) {
		return &recordingSink{rec: rec, instance: instance, srcP: int64(tp.srcP), ordered: tp.ordered,
			allowed: allowed, failAt: -1}, nil
	})
	if mid == nil {
		b.connect(src, sink, tp.part)
		return b.job
	}
	b.connect(src, mid, tp.part)
	b.connect(mid, sink, plan.Rebalance)
	return b.job
}

// --- helpers --------------------------------------------------------------------

// startNode makes a node that is shut down when the test ends.
func startNode(t *testing.T) *Node {
	t.Helper()
	n := NewNode(zerolog.Nop())
	t.Cleanup(n.Shutdown)
	return n
}

// waitJob waits for a job with a deadline and returns its error.
func waitJob(t *testing.T, j *Job) error {
	t.Helper()
	select {
	case <-j.Done():
		return j.Err()
	case <-time.After(flowDeadline):
		t.Fatalf("job %s did not finish within %v (records in %d, out %d)",
			j.Plan.Name, flowDeadline, j.Metrics.RecordsIn.Load(), j.Metrics.RecordsOut.Load())
		return nil
	}
}

// checkExactlyOnce checks that values 0..n-1 each arrived copies times.
func checkExactlyOnce(t *testing.T, rec *recorder, n int64, copies int) {
	t.Helper()
	rec.mu.Lock()
	problems := rec.problems
	rec.mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("sinks saw problems:\n%s", strings.Join(problems, "\n"))
	}
	if got, want := rec.count.Load(), n*int64(copies); got != want {
		t.Errorf("sinks received %d records, want %d", got, want)
	}
	if got, want := rec.sum.Load(), int64(copies)*n*(n-1)/2; got != want {
		t.Errorf("sum of received values %d, want %d", got, want)
	}
	bad := 0
	for v := range rec.seen {
		if c := rec.seen[v].Load(); int(c) != copies {
			if bad < 5 {
				t.Errorf("value %d arrived %d times, want %d", v, c, copies)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d values did not arrive exactly %d times", bad, copies)
	}
}

// checkBounds checks the flow-control metrics against the options.
func checkBounds(t *testing.T, m *Metrics, o Options) {
	t.Helper()
	if occ := m.MaxChannelOccupancy.Load(); occ < 1 || occ > int64(o.ChannelCapacity) {
		t.Errorf("MaxChannelOccupancy %d, want in [1, capacity %d]", occ, o.ChannelCapacity)
	}
	if p := m.MaxPendingInput.Load(); p < 1 || p > int64(o.DeliveryWindow) {
		t.Errorf("MaxPendingInput %d, want in [1, window %d]", p, o.DeliveryWindow)
	}
	if ob := m.MaxOutbox.Load(); ob > maxOutboxBound {
		t.Errorf("MaxOutbox %d, want ≤ %d", ob, maxOutboxBound)
	}
}

// --- tests ----------------------------------------------------------------------

func TestFlowDeliversExactlyOnceWithinBounds(t *testing.T) {
	type flow struct{ capacity, window int }
	flows := []flow{{1, 1}, {2, 1}, {2, 2}, {8, 2}, {8, 8}}
	batches := []int{1, 7, 64}
	node := startNode(t)
	jobID := 0
	for _, tp := range topologies {
		for _, f := range flows {
			for _, batch := range batches {
				jobID++
				name := fmt.Sprintf("flow-%d", jobID)
				t.Run(fmt.Sprintf("%s/C=%d/W=%d/B=%d", tp.name, f.capacity, f.window, batch), func(t *testing.T) {
					n := int64(300 * batch)
					if batch == 1 {
						n = 1000
					}
					rec := newRecorder(n)
					opts := Options{BatchSize: batch, ChannelCapacity: f.capacity, DeliveryWindow: f.window,
						FlushInterval: time.Millisecond}
					j, err := node.Submit(tp.build(name, n, rec), opts)
					if err != nil {
						t.Fatal(err)
					}
					if err := waitJob(t, j); err != nil {
						t.Fatalf("job failed: %v", err)
					}
					m := j.Metrics
					if got := m.RecordsIn.Load(); got != n {
						t.Errorf("RecordsIn %d, want %d", got, n)
					}
					if got, want := m.RecordsOut.Load(), n*int64(tp.copies); got != want {
						t.Errorf("RecordsOut %d, want %d", got, want)
					}
					checkExactlyOnce(t, rec, n, tp.copies)
					checkBounds(t, m, opts)
					t.Logf("buffers %d, max occupancy %d, max outbox %d, max pending %d",
						m.BuffersSent.Load(), m.MaxChannelOccupancy.Load(), m.MaxOutbox.Load(), m.MaxPendingInput.Load())
				})
			}
		}
	}
}

// waitQuiet polls f until it has not changed for quiet, failing after flowDeadline.
func waitQuiet(t *testing.T, what string, f func() int64, quiet time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(flowDeadline)
	v, since := f(), time.Now()
	for time.Now().Before(deadline) {
		runtime.Gosched()
		if cur := f(); cur != v {
			v, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return v
		}
	}
	t.Fatalf("%s still changing after %v", what, flowDeadline)
	return 0
}

// waitUntil polls cond until it holds, failing after flowDeadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(flowDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func TestFlowSlowConsumerStopsFastProducer(t *testing.T) {
	// With the sinks gated, no buffer is ever processed, so no credit returns. A
	// source may then have read at most, per channel, C sent buffers plus its
	// outbox (≤ maxOutboxBound buffers) plus one partial buffer, plus the one
	// Read batch in progress. The bound holds at every moment, so the waits below
	// only make the check meaningful; they cannot make it pass.
	const n, batch = 200_000, 32
	for _, tp := range []topology{topologies[0], topologies[1], topologies[3]} {
		for _, capacity := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%s/C=%d", tp.name, capacity), func(t *testing.T) {
				node := startNode(t)
				rec := newRecorder(n)
				rec.gate = make(chan struct{})
				var ungate sync.Once
				release := func() { ungate.Do(func() { close(rec.gate) }) }
				t.Cleanup(release) // runs before the node's Shutdown
				opts := Options{BatchSize: batch, ChannelCapacity: capacity, DeliveryWindow: 1,
					FlushInterval: time.Millisecond}
				j, err := node.Submit(tp.build("gated", n, rec), opts)
				if err != nil {
					t.Fatal(err)
				}
				m := j.Metrics
				credit := int64(tp.srcP * tp.sinkP * capacity)
				waitUntil(t, "every sink blocked in Write", func() bool { return rec.writing.Load() == int64(tp.sinkP) })
				waitUntil(t, "a producer holding a buffer without credit", func() bool { return m.MaxOutbox.Load() >= 1 })
				sent := waitQuiet(t, "BuffersSent", m.BuffersSent.Load, 50*time.Millisecond)
				read := waitQuiet(t, "RecordsIn", m.RecordsIn.Load, 50*time.Millisecond)
				if sent > credit {
					t.Fatalf("%d buffers sent with %d credits and none returned", sent, credit)
				}
				perSource := int64(tp.sinkP*(capacity+maxOutboxBound)*batch + batch)
				if bound := int64(tp.srcP) * perSource; read > bound {
					t.Fatalf("sources read %d records while the sinks were gated, want ≤ %d", read, bound)
				}
				if rec.count.Load() != 0 {
					t.Fatalf("gated sinks recorded %d records", rec.count.Load())
				}
				checkBounds(t, m, opts)
				t.Logf("gated: read %d of %d records, sent %d buffers (credit %d), max outbox %d",
					read, n, sent, credit, m.MaxOutbox.Load())

				release()
				if err := waitJob(t, j); err != nil {
					t.Fatalf("job failed: %v", err)
				}
				if got := m.RecordsIn.Load(); got != n {
					t.Errorf("RecordsIn %d, want %d", got, n)
				}
				checkExactlyOnce(t, rec, n, tp.copies)
				checkBounds(t, m, opts)
			})
		}
	}
}

func TestFlowOperatorErrorFailsJobNamingTask(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		build    func(rec *recorder) *plan.Job
		task     string
		contains string
		is       error
	}{
		{
			name: "transform",
			build: func(*recorder) *plan.Job {
				b := newPlan("fail-transform")
				src := b.source("src", 2, 10_000)
				mid := b.op("explode", plan.KindTransform, 3, func(instance int) (plan.Instance, error) {
					if instance == 1 {
						return failingTransform{err: errBoom}, nil
					}
					return identity{}, nil
				})
				sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return discard{}, nil })
				b.connect(src, mid, plan.Rebalance)
				b.connect(mid, sink, plan.Rebalance)
				return b.job
			},
			task: "explode[1]", contains: "boom", is: errBoom,
		},
		{
			name: "source",
			build: func(*recorder) *plan.Job {
				b := newPlan("fail-source")
				src := b.op("gen", plan.KindSource, 2, func(instance int) (plan.Instance, error) {
					s := &counterSource{n: 10_000}
					if instance == 0 {
						s.failAt = 500
					}
					return s, nil
				})
				sink := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return discard{}, nil })
				b.connect(src, sink, plan.Rebalance)
				return b.job
			},
			task: "gen[0]", contains: "source broken", is: errSourceBroken,
		},
		{
			name: "sink",
			build: func(rec *recorder) *plan.Job {
				b := newPlan("fail-sink")
				src := b.source("src", 1, 10_000)
				sink := b.op("out", plan.KindSink, 2, func(instance int) (plan.Instance, error) {
					return &recordingSink{rec: rec, instance: instance, srcP: 1, failAt: 4001}, nil
				})
				b.connect(src, sink, plan.Rebalance) // 4001 is odd: instance 1
				return b.job
			},
			task: "out[1]", contains: "sink refuses 4001",
		},
		{
			name: "new",
			build: func(*recorder) *plan.Job {
				b := newPlan("fail-new")
				src := b.source("src", 1, 100)
				sink := b.op("out", plan.KindSink, 2, func(instance int) (plan.Instance, error) {
					if instance == 1 {
						return nil, errBoom
					}
					return discard{}, nil
				})
				b.connect(src, sink, plan.Rebalance)
				return b.job
			},
			task: "out[1]", contains: "create instance", is: errBoom,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := startNode(t)
			j, err := node.Submit(tc.build(newRecorder(10_000)), Options{BatchSize: 16, ChannelCapacity: 2})
			if err != nil {
				t.Fatal(err)
			}
			err = waitJob(t, j)
			if err == nil {
				t.Fatal("job succeeded, want a failure")
			}
			var te *TaskError
			if !errors.As(err, &te) {
				t.Fatalf("error %v (%T) is not a *TaskError", err, err)
			}
			if te.Task != tc.task {
				t.Errorf("TaskError.Task %q, want %q", te.Task, tc.task)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.task) || !strings.Contains(msg, tc.contains) {
				t.Errorf("error %q should name %q and say %q", msg, tc.task, tc.contains)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
		})
	}
}

// failingTransform fails on its first batch.
type failingTransform struct{ err error }

func (failingTransform) Open(plan.TaskInfo) error { return nil }
func (failingTransform) Close() error             { return nil }
func (f failingTransform) Process(int, plan.Batch, plan.Output) error {
	return fmt.Errorf("explode: %w", f.err)
}
func (failingTransform) Finish(plan.Output) error { return nil }

// discard is a sink that drops everything.
type discard struct{}

func (discard) Open(plan.TaskInfo) error { return nil }
func (discard) Close() error             { return nil }
func (discard) Write(plan.Batch) error   { return nil }
func (discard) Finish() error            { return nil }

func TestSubmitRejectsInvalidPlan(t *testing.T) {
	valid := func() *plan.Job {
		b := newPlan("ok")
		src := b.source("src", 2, 10)
		sink := b.op("sink", plan.KindSink, 3, func(int) (plan.Instance, error) { return discard{}, nil })
		b.connect(src, sink, plan.Rebalance)
		return b.job
	}
	tests := []struct {
		name     string
		job      func() *plan.Job
		opts     Options
		contains []string
	}{
		{"forward with unequal parallelism", func() *plan.Job {
			j := valid()
			j.Edges[0].Partitioner = plan.Forward
			return j
		}, Options{}, []string{"invalid job", "forward needs equal parallelism", "src"}},
		{"no sink", func() *plan.Job {
			b := newPlan("nosink")
			b.source("src", 1, 10)
			return b.job
		}, Options{}, []string{"invalid job", "goes nowhere"}},
		{"hash without key", func() *plan.Job {
			j := valid()
			j.Edges[0].Partitioner = plan.KeyGroupHash
			j.Edges[0].NewWriter = func(cfg plan.WriterConfig) (plan.EdgeWriter, error) { return plan.NewWriter[int64](cfg, nil, nil) }
			return j
		}, Options{}, []string{"invalid job", "without a key function"}},
		{"edge without writer", func() *plan.Job {
			j := valid()
			j.Edges[0].NewWriter = nil
			return j
		}, Options{}, []string{"invalid job", "no writer"}},
		{"parallelism above max", func() *plan.Job {
			j := valid()
			j.MaxParallelism = 2
			return j
		}, Options{}, []string{"invalid job", `"sink"`, "exceeds maxParallelism 2"}},
		{"no name", func() *plan.Job {
			j := valid()
			j.Name = ""
			return j
		}, Options{}, []string{"invalid job", "no name"}},
		{"window above capacity", valid, Options{ChannelCapacity: 2, DeliveryWindow: 3},
			[]string{`job "ok"`, "delivery window 3"}},
		{"negative batch size", valid, Options{BatchSize: -1}, []string{"batch size -1"}},
	}
	node := startNode(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, err := node.Submit(tc.job(), tc.opts)
			if err == nil {
				t.Fatalf("Submit accepted the plan (job %v)", j.Plan.Name)
			}
			if j != nil {
				t.Errorf("Submit returned a job with error %v", err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
	// The node still runs jobs after rejecting plans.
	j, err := node.Submit(valid(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJob(t, j); err != nil {
		t.Fatalf("valid job failed: %v", err)
	}
}
