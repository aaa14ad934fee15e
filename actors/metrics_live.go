package actors

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// taskCounters are one task instance's live figures, kept across its
// restarts so they only grow. The task writes them (per buffer or per
// operator call, never per record); the metrics collector reads them.
type taskCounters struct {
	operator string
	instance int
	since    time.Time // the first incarnation's start

	recordsIn  atomic.Int64 // records read (sources) or handed to the operator
	recordsOut atomic.Int64 // records sealed into output buffers, or written (sinks)
	busyNs     atomic.Int64 // time in operator calls and source reads
	// backpressuredNs is time with at least one output channel out of
	// credit; blockedSince is when the current such stretch began (unix ns,
	// 0 when not blocked).
	backpressuredNs atomic.Int64
	blockedSince    atomic.Int64
	// stoppedAt is when the latest incarnation stopped (unix ns; 0 while
	// one runs): a stopped task's time stands still.
	stoppedAt atomic.Int64
}

// started notes that an incarnation of the task runs.
func (c *taskCounters) started() { c.stoppedAt.Store(0) }

// stopped notes that the task's incarnation stopped at now.
func (c *taskCounters) stopped(now time.Time) {
	c.unblocked(now)
	c.stoppedAt.Store(now.UnixNano())
}

// busy adds d to the task's busy time.
func (c *taskCounters) busy(d time.Duration) { c.busyNs.Add(int64(d)) }

// blocked notes that the task's outputs ran out of credit at now.
func (c *taskCounters) blocked(now time.Time) { c.blockedSince.CompareAndSwap(0, now.UnixNano()) }

// unblocked ends a backpressured stretch at now.
func (c *taskCounters) unblocked(now time.Time) {
	if s := c.blockedSince.Swap(0); s != 0 {
		c.backpressuredNs.Add(now.UnixNano() - s)
	}
}

// times are the task's busy, backpressured and idle time up to now (or up
// to when it stopped); idle is the rest of its life.
func (c *taskCounters) times(now time.Time) (busy, backpressured, idle time.Duration) {
	if s := c.stoppedAt.Load(); s != 0 {
		now = time.Unix(0, s)
	}
	busy = time.Duration(c.busyNs.Load())
	backpressured = time.Duration(c.backpressuredNs.Load())
	if s := c.blockedSince.Load(); s != 0 {
		backpressured += time.Duration(max(0, now.UnixNano()-s))
	}
	idle = max(0, now.Sub(c.since)-busy-backpressured)
	return busy, backpressured, idle
}

// channelGauges are one channel's buffers queued (consumer's side: received,
// not yet processed) and credits left (producer's side).
type channelGauges struct {
	name            string
	queued, credits atomic.Int64
	hasQueued       atomic.Bool // this node holds the channel's consumer end
	hasCredits      atomic.Bool // this node holds its producer end
}

// liveMetrics are a job's per-task and per-channel figures on this node.
type liveMetrics struct {
	mu       sync.Mutex
	tasks    map[liveTaskKey]*taskCounters
	channels map[string]*channelGauges
}

// liveTaskKey names a task instance within a job, for its counters.
type liveTaskKey struct {
	op       string
	instance int
}

// task returns the counters of instance of operator op, made on first use.
func (l *liveMetrics) task(op string, instance int) *taskCounters {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := liveTaskKey{op, instance}
	if c, ok := l.tasks[k]; ok {
		return c
	}
	if l.tasks == nil {
		l.tasks = map[liveTaskKey]*taskCounters{}
	}
	c := &taskCounters{operator: op, instance: instance, since: time.Now()}
	l.tasks[k] = c
	return c
}

// channel returns the gauges of the named channel, made on first use.
func (l *liveMetrics) channel(name string) *channelGauges {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.channels[name]; ok {
		return g
	}
	if l.channels == nil {
		l.channels = map[string]*channelGauges{}
	}
	g := &channelGauges{name: name}
	l.channels[name] = g
	return g
}

// snapshot lists the task counters and channel gauges, sorted by name.
func (l *liveMetrics) snapshot() ([]*taskCounters, []*channelGauges) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tasks := make([]*taskCounters, 0, len(l.tasks))
	for _, c := range l.tasks {
		tasks = append(tasks, c)
	}
	chans := make([]*channelGauges, 0, len(l.channels))
	for _, g := range l.channels {
		chans = append(chans, g)
	}
	sort.Slice(tasks, func(i, j int) bool {
		if tasks[i].operator != tasks[j].operator {
			return tasks[i].operator < tasks[j].operator
		}
		return tasks[i].instance < tasks[j].instance
	})
	sort.Slice(chans, func(i, j int) bool { return chans[i].name < chans[j].name })
	return tasks, chans
}

// channelName is how metrics and logs name the channel from producer
// instance from of operator producer to consumer task consumer.
func channelName(producer string, from int, consumer string) string {
	return producer + "[" + strconv.Itoa(from) + "]→" + consumer
}

// TaskFigures are one task instance's counters on this node.
type TaskFigures struct {
	Operator                  string
	Instance                  int
	RecordsIn, RecordsOut     int64
	Busy, Backpressured, Idle time.Duration
}

// TaskFigures lists the counters of the job's task instances on this node
// at now (every instance that ran here, across its restarts), sorted by
// operator and instance.
func (j *Job) TaskFigures(now time.Time) []TaskFigures {
	tasks, _ := j.live.snapshot()
	out := make([]TaskFigures, len(tasks))
	for i, t := range tasks {
		busy, bp, idle := t.times(now)
		out[i] = TaskFigures{Operator: t.operator, Instance: t.instance, RecordsIn: t.recordsIn.Load(),
			RecordsOut: t.recordsOut.Load(), Busy: busy, Backpressured: bp, Idle: idle}
	}
	return out
}
