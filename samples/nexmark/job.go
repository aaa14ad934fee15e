package nexmark

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
)

// Output is where a query's results go: a JSON-lines file, or counted and
// discarded when File is empty.
type Output struct {
	File      string
	Discarded *atomic.Int64 // results discarded (File empty)
}

// sinkTo ends s in o (a file is written by one instance).
func sinkTo[T any](s weir.Stream[T], o Output) {
	if o.File != "" {
		weir.ToSink(s, "sink", weir.FileSink[T](o.File), weir.Parallelism(1))
		return
	}
	weir.ToSink(s, "sink", weir.DiscardSink[T](o.Discarded))
}

// queries adds each query to a graph and sinks its results.
var queries = map[string]func(weir.Stream[Event], Output){
	"q0":  func(e weir.Stream[Event], o Output) { sinkTo(Q0(e), o) },
	"q1":  func(e weir.Stream[Event], o Output) { sinkTo(Q1(e), o) },
	"q2":  func(e weir.Stream[Event], o Output) { sinkTo(Q2(e), o) },
	"q3":  func(e weir.Stream[Event], o Output) { sinkTo(Q3(e), o) },
	"q4":  func(e weir.Stream[Event], o Output) { sinkTo(Q4(e), o) },
	"q5":  func(e weir.Stream[Event], o Output) { sinkTo(Q5(e), o) },
	"q7":  func(e weir.Stream[Event], o Output) { sinkTo(Q7(e), o) },
	"q8":  func(e weir.Stream[Event], o Output) { sinkTo(Q8(e), o) },
	"q11": func(e weir.Stream[Event], o Output) { sinkTo(Q11(e), o) },
}

// Queries is the names of the queries, in order.
func Queries() []string {
	names := make([]string, 0, len(queries))
	for q := range queries {
		names = append(names, q)
	}
	slices.SortFunc(names, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return names
}

// JobConfig is one query's job.
type JobConfig struct {
	Query       string
	Events      int64 // weir.Unbounded for no end
	Generator   Config
	Parallelism int
	Out         Output
	// SleepMs, when > 0, slows the job by this average sleep per event in
	// a stage after the source, in ms (e.g. 0.03), so that tests can kill
	// it part way.
	SleepMs float64
}

// Build makes the graph of a query over the generated events.
func Build(cfg JobConfig) (*weir.Graph, error) {
	add, ok := queries[cfg.Query]
	switch {
	case !ok:
		return nil, fmt.Errorf("nexmark: no query %q (the queries: %s)", cfg.Query, strings.Join(Queries(), ", "))
	case cfg.Events < weir.Unbounded:
		return nil, fmt.Errorf("nexmark: events %d must be ≥ 0 (or unbounded)", cfg.Events)
	case cfg.Parallelism < 1:
		return nil, fmt.Errorf("nexmark: parallelism %d must be ≥ 1", cfg.Parallelism)
	case cfg.Out.File == "" && cfg.Out.Discarded == nil:
		return nil, fmt.Errorf("nexmark: an output file or a discard counter is required")
	case cfg.SleepMs < 0:
		return nil, fmt.Errorf("nexmark: sleep %v ms per event must be ≥ 0", cfg.SleepMs)
	}
	gen, err := NewGenerator(cfg.Generator)
	if err != nil {
		return nil, err
	}
	g := weir.NewGraph("nexmark-"+cfg.Query, weir.WithParallelism(cfg.Parallelism))
	events := Source(g, gen, cfg.Events)
	if cfg.SleepMs > 0 {
		events = slowed(events, time.Duration(cfg.SleepMs*float64(time.Millisecond)))
	}
	add(events, cfg.Out)
	return g, nil
}

// slowed passes events on, each instance sleeping per event on average.
func slowed(events weir.Stream[Event], per time.Duration) weir.Stream[Event] {
	sleepers := weir.NewSleepers(per)
	slow := weir.MapWithContext(events, "slow", func(ctx *weir.OpContext, e Event) Event {
		sleepers[ctx.Instance()].Tick()
		return e
	})
	return weir.Timestamped(slow, eventTime)
}
