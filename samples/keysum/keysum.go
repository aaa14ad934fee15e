// Package keysum is a keyed running sum behind a forward and a broadcast
// edge: record i has key i mod K and a weight that depends on i only; the
// source hands it to "weigh" over a forward edge; a broadcast edge hands
// every weighed record to every instance of "claim", and each instance keeps
// the records of the keys it claims (key index mod its parallelism), so each
// record goes on exactly once; a keyed running count and sum then write one
// output record per input record: {"key":"k000042","count":17,"sum":8120}.
//
// Every record of a key comes from one source instance and takes one path,
// so each key's output is the same sequence at any parallelism.
package keysum

import (
	"fmt"
	"time"

	"github.com/weirstream/weir"
)

// Event is one input record.
type Event struct {
	Key   string `msgpack:"k" json:"key"`
	Index int    `msgpack:"x" json:"index"` // the key's index, i mod K
	Seq   int64  `msgpack:"i" json:"seq"`
}

// Weighed is an event with its weight.
type Weighed struct {
	Event  `msgpack:"e"`
	Weight int64 `msgpack:"w"`
}

// claimed is a weighed record and whether the claim instance that saw it
// keeps it.
type claimed struct {
	Weighed `msgpack:"r"`
	Mine    bool `msgpack:"m"`
}

// Sum is one output record: the key's running count and sum of weights
// after this record.
type Sum struct {
	Key   string `msgpack:"k" json:"key"`
	Count int64  `msgpack:"c" json:"count"`
	Sum   int64  `msgpack:"s" json:"sum"`
}

// Config sizes the job.
type Config struct {
	Records     int64   // N
	Keys        int     // K, a multiple of Parallelism
	Parallelism int     // of every operator but the file sink
	Out         string  // JSON-lines file
	SleepMs     float64 // average sleep per record in the sum stage
}

// Weight is record seq's weight, 1 … 1000.
func Weight(seq int64) int64 { return seq*7919%1000 + 1 }

// Build makes the keysum graph.
func Build(cfg Config) (*weir.Graph, error) {
	switch {
	case cfg.Records < 0:
		return nil, fmt.Errorf("keysum: records %d must be ≥ 0", cfg.Records)
	case cfg.Parallelism < 1:
		return nil, fmt.Errorf("keysum: parallelism %d must be ≥ 1", cfg.Parallelism)
	case cfg.Keys < 1 || cfg.Keys%cfg.Parallelism != 0:
		return nil, fmt.Errorf("keysum: keys %d must be a positive multiple of parallelism %d (each key's records then come from one source instance, in order)", cfg.Keys, cfg.Parallelism)
	case cfg.SleepMs < 0:
		return nil, fmt.Errorf("keysum: sleep-ms %v must be ≥ 0", cfg.SleepMs)
	case cfg.Out == "":
		return nil, fmt.Errorf("keysum: needs an output file")
	}
	keys := make([]string, cfg.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%06d", i)
	}
	k := int64(cfg.Keys)
	p := weir.Parallelism(cfg.Parallelism)
	g := weir.NewGraph("keysum")
	events := weir.Generate(g, "source", cfg.Records, func(i int64) Event {
		return Event{Key: keys[i%k], Index: int(i % k), Seq: i}
	}, p)
	weighed := weir.Map(events.Forward(), "weigh", func(e Event) Weighed {
		return Weighed{Event: e, Weight: Weight(e.Seq)}
	}, p)
	claims := weir.MapWithContext(weighed.Broadcast(), "claim", func(ctx *weir.OpContext, w Weighed) claimed {
		return claimed{Weighed: w, Mine: w.Index%ctx.Parallelism() == ctx.Instance()}
	}, p)
	mine := weir.Filter(claims, "mine", func(c claimed) bool { return c.Mine }, p)
	type total struct {
		Count int64 `msgpack:"c"`
		Sum   int64 `msgpack:"s"`
	}
	totals := weir.NewValueState[total](g, "total")
	sleepers := weir.NewSleepers(time.Duration(cfg.SleepMs * float64(time.Millisecond))) // one per instance
	sums := weir.Process(weir.KeyBy(mine, func(c claimed) string { return c.Key }), "sum",
		func(ctx *weir.KeyedContext[string], c claimed, out *weir.Emitter[Sum]) error {
			sleepers[ctx.Instance()].Tick()
			t := totals.Get(ctx)
			t.Count++
			t.Sum += c.Weight
			totals.Set(ctx, t)
			out.Emit(Sum{Key: c.Key, Count: t.Count, Sum: t.Sum})
			return nil
		}, weir.WithState(totals), p)
	weir.ToSink(sums, "sink", weir.FileSink[Sum](cfg.Out))
	return g, nil
}
