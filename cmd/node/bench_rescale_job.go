package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// The rescale benchmark's job: a paced source of keyed records stamped with
// the time each is due, a keyed running count (the operator rescaled), and
// a sink that records every record's latency, key group and arrival time.

// rescaleEvent is one input record: its key and when it was due at the
// source (ns since the run's start).
type rescaleEvent struct {
	Key string `msgpack:"k"`
	Due int64  `msgpack:"d"`
}

// rescaleCount is one output record: the key's group and the input's due
// time (the count is what the job computes; the bench only needs it to be
// computed).
type rescaleCount struct {
	Group int32 `msgpack:"g"`
	Count int64 `msgpack:"c"`
	Due   int64 `msgpack:"d"`
}

// pacer is the schedule the paced sources follow: record i is due at
// start + i/rate. start is the first read of the first run; a run restored
// later keeps it, so the input it missed while stopped is due already (as
// a log's backlog grows while its reader is down).
type pacer struct {
	rate  float64 // records per second over all source instances
	once  sync.Once
	start time.Time
	began chan struct{} // closed once start is set
}

func newPacer(rate float64) *pacer { return &pacer{rate: rate, began: make(chan struct{})} }

// begin sets the start at the first call.
func (p *pacer) begin() {
	p.once.Do(func() {
		p.start = time.Now()
		close(p.began)
	})
}

// due is when record i is due, as time since the start.
func (p *pacer) due(i int64) time.Duration {
	return time.Duration(float64(i) / p.rate * float64(time.Second))
}

// since is the time since the start (which must have begun).
func (p *pacer) since(t time.Time) time.Duration { return t.Sub(p.start) }

// pacedReadWait bounds how long one Read waits for its next record, so the
// source task answers control messages (barriers, stops) within it.
const pacedReadWait = time.Millisecond

// pacedSource is instance i of p of the paced source: it produces the
// indices i, i+p, i+2p, … each once it is due; its offset is how many it
// produced.
type pacedSource struct {
	pace     *pacer
	keys     []string
	instance int
	of       int
	offset   int64
}

func (s *pacedSource) Open(info weir.TaskInfo) error {
	s.of = info.Parallelism
	s.pace.begin()
	return nil
}
func (s *pacedSource) Close() error  { return nil }
func (s *pacedSource) Offset() int64 { return s.offset }
func (s *pacedSource) SeekTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("paced source: negative offset %d", offset)
	}
	s.offset = offset
	return nil
}

// index is the record index the instance produces next.
func (s *pacedSource) index() int64 { return int64(s.instance) + s.offset*int64(s.of) }

// Read emits the records due now, up to len(buf); with none due it waits
// for the next one, at most pacedReadWait.
func (s *pacedSource) Read(buf []rescaleEvent) (int, bool, error) {
	now := s.pace.since(time.Now())
	if wait := s.pace.due(s.index()) - now; wait > 0 {
		time.Sleep(min(wait, pacedReadWait))
		now = s.pace.since(time.Now())
	}
	n := 0
	for n < len(buf) {
		i := s.index()
		d := s.pace.due(i)
		if d > now {
			break
		}
		buf[n] = rescaleEvent{Key: s.keys[i%int64(len(s.keys))], Due: int64(d)}
		n++
		s.offset++
	}
	return n, false, nil
}

// latencySample is one record at the sink: when it was due and when it
// arrived (µs since the pacer's start), its key group and which run of the
// case delivered it.
type latencySample struct {
	DueUs, OutUs int32
	Group        int16
	Run          int16
}

// latencyLog collects the sinks' samples; each sink instance appends to its
// own slot under that slot's lock (instances of a stopped run may still
// write while the next run's start).
type latencyLog struct {
	pace  *pacer
	mu    []sync.Mutex
	slots [][]latencySample
	// out counts the records that reached the sinks, over all runs.
	out atomic.Int64
}

func newLatencyLog(pace *pacer, instances int) *latencyLog {
	return &latencyLog{pace: pace, mu: make([]sync.Mutex, instances), slots: make([][]latencySample, instances)}
}

// add records a batch that reached sink instance i of run at now.
func (l *latencyLog) add(i, run int, batch []rescaleCount, now time.Time) {
	out := int32(l.pace.since(now) / time.Microsecond)
	l.mu[i].Lock()
	for _, r := range batch {
		l.slots[i] = append(l.slots[i], latencySample{DueUs: int32(r.Due / int64(time.Microsecond)), OutUs: out, Group: int16(r.Group), Run: int16(run)})
	}
	l.mu[i].Unlock()
	l.out.Add(int64(len(batch)))
}

// samples returns every sample, the slots' in turn.
func (l *latencyLog) samples() []latencySample {
	var all []latencySample
	for i := range l.slots {
		l.mu[i].Lock()
		all = append(all, l.slots[i]...)
		l.mu[i].Unlock()
	}
	return all
}

// latencySink is one sink instance of one run.
type latencySink struct {
	log      *latencyLog
	run      int
	instance int
}

func (s *latencySink) Open(weir.TaskInfo) error { return nil }
func (s *latencySink) Finish() error            { return nil }
func (s *latencySink) Close() error             { return nil }
func (s *latencySink) Write(batch []rescaleCount) error {
	s.log.add(s.instance, s.run, batch, time.Now())
	return nil
}

// rescaleJob sizes the benchmark's job.
type rescaleJob struct {
	Keys        int
	Parallelism int // of the source, the sink and count's start
	SleepMs     float64
	// StateBytes pads each key's state with that many bytes, besides its
	// 8-byte count (set at the key's first record).
	StateBytes int
}

// build makes the graph of one run of a case: its sinks log into log as run.
func (j rescaleJob) build(pace *pacer, log *latencyLog, run int) *weir.Graph {
	keys := keycount.Keys(j.Keys)
	g := weir.NewGraph("rescalebench")
	p := weir.Parallelism(j.Parallelism)
	events := weir.FromSource(g, "source", func(i int) weir.Source[rescaleEvent] {
		return &pacedSource{pace: pace, keys: keys, instance: i}
	}, p)
	counts := weir.NewValueState[int64](g, "count")
	padding := weir.NewValueState[[]byte](g, "padding")
	pad := make([]byte, j.StateBytes)
	sleepers := weir.NewSleepers(time.Duration(j.SleepMs * float64(time.Millisecond)))
	out := weir.Process(weir.KeyBy(events, func(e rescaleEvent) string { return e.Key }), "count",
		func(ctx *weir.KeyedContext[string], e rescaleEvent, out *weir.Emitter[rescaleCount]) error {
			sleepers[ctx.Instance()].Tick()
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			if c == 1 && len(pad) > 0 {
				padding.Set(ctx, pad)
			}
			out.Emit(rescaleCount{Group: int32(ctx.KeyGroup()), Count: c, Due: e.Due})
			return nil
		}, weir.WithState(counts, padding), p)
	weir.ToSink(out, "sink", func(i int) weir.Sink[rescaleCount] {
		return &latencySink{log: log, run: run, instance: i}
	}, p)
	return g
}
