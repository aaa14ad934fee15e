// Package keycount is the keyed running-count sample: records i = 0..N-1 with key
// fmt.Sprintf("k%06d", i % K), a keyed running count, and one output record per
// input record: {"key":"k000042","count":17}.
package keycount

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
)

// Event is one input record.
type Event struct {
	Key string `msgpack:"k" json:"key"`
	Seq int64  `msgpack:"i" json:"seq"`
}

// Count is one output record: the key's running count after this record.
type Count struct {
	Key   string `msgpack:"k" json:"key"`
	Count int64  `msgpack:"c" json:"count"`
}

// Config sizes the job.
type Config struct {
	Records     int64   // N
	Keys        int     // K
	Parallelism int     // of source and count (the file sink runs once)
	Out         string  // JSON-lines file; empty means a discarding sink
	SleepMs     float64 // average sleep per record in the count stage
	// Discarded counts records reaching the discarding sink (may be nil).
	Discarded *atomic.Int64
	// Sink, if not nil, makes the sink instead of Out's or the discarding
	// one, at Parallelism instances.
	Sink func(instance int) weir.Sink[Count]
}

// Keys precomputes the K key strings ("k000000", "k000001", ...: "k%06d")
// so the source does not format per record. They are cut from one string:
// every node builds them whenever it builds the graph, and a million
// formatted one by one cost a node 0.16–0.31 s of CPU at each restart (beside
// its restore) and a million allocations.
func Keys(k int) []string {
	if k <= 0 {
		return []string{}
	}
	var all []byte
	ends := make([]int, k)
	for i := range k {
		all = append(all, 'k')
		for pad := 6 - decimalLen(i); pad > 0; pad-- {
			all = append(all, '0')
		}
		all = strconv.AppendInt(all, int64(i), 10)
		ends[i] = len(all)
	}
	joined := string(all)
	keys := make([]string, k)
	start := 0
	for i, end := range ends {
		keys[i] = joined[start:end]
		start = end
	}
	return keys
}

// decimalLen is the number of decimal digits of i ≥ 0.
func decimalLen(i int) int {
	n := 1
	for ; i >= 10; i /= 10 {
		n++
	}
	return n
}

// Build makes the keycount graph.
func Build(cfg Config) (*weir.Graph, error) {
	if cfg.Records < 0 && cfg.Records != weir.Unbounded {
		return nil, fmt.Errorf("keycount: records %d must be ≥ 0", cfg.Records)
	}
	if cfg.Keys < 1 {
		return nil, fmt.Errorf("keycount: keys %d must be ≥ 1", cfg.Keys)
	}
	if cfg.Parallelism < 1 {
		return nil, fmt.Errorf("keycount: parallelism %d must be ≥ 1", cfg.Parallelism)
	}
	if cfg.SleepMs < 0 {
		return nil, fmt.Errorf("keycount: sleep-ms %v must be ≥ 0", cfg.SleepMs)
	}
	keys := Keys(cfg.Keys)
	k := int64(cfg.Keys)
	g := weir.NewGraph("keycount")
	events := weir.Generate(g, "source", cfg.Records, func(i int64) Event {
		return Event{Key: keys[i%k], Seq: i}
	}, weir.Parallelism(cfg.Parallelism))
	counts := weir.NewValueState[int64](g, "count")
	sleepers := weir.NewSleepers(time.Duration(cfg.SleepMs * float64(time.Millisecond))) // one per instance
	out := weir.Process(weir.KeyBy(events, func(e Event) string { return e.Key }), "count",
		func(ctx *weir.KeyedContext[string], e Event, out *weir.Emitter[Count]) error {
			sleepers[ctx.Instance()].Tick()
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(Count{Key: e.Key, Count: c})
			return nil
		}, weir.WithState(counts), weir.Parallelism(cfg.Parallelism))
	switch {
	case cfg.Sink != nil:
		weir.ToSink(out, "sink", cfg.Sink, weir.Parallelism(cfg.Parallelism))
	case cfg.Out != "":
		weir.ToSink(out, "sink", weir.FileSink[Count](cfg.Out))
	default:
		weir.ToSink(out, "sink", weir.DiscardSink[Count](cfg.Discarded), weir.Parallelism(cfg.Parallelism))
	}
	return g, nil
}
