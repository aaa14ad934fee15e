// Package backpressure is the FLIP-76 benchmark topology: source → map → map →
// sleepy map → measure → sink, every edge a random shuffle and every operator at
// the same parallelism (the file sink, when there is one, runs once). The sleepy map makes the job backpressured; the measure
// stage records each record's end-to-end latency into the graph's Latency
// histogram.
package backpressure

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
)

// Record is what flows through the job.
type Record struct {
	// Created is when the source made the record (UnixNano).
	Created int64  `msgpack:"t" json:"created"`
	ID      int64  `msgpack:"i" json:"id"`
	Payload string `msgpack:"p" json:"payload"`
	// Hops counts the map stages the record passed.
	Hops int32 `msgpack:"h" json:"hops"`
}

// Config sizes the job.
type Config struct {
	Records     int64   // weir.Unbounded for no end (end it with a duration)
	Parallelism int     // of every operator
	SleepMs     float64 // average sleep per record in the sleepy map
	// Out is a JSON-lines file the sink writes, exactly once with
	// checkpoints (the file sink runs as one instance); empty means a
	// discarding sink at Parallelism.
	Out string
	// Measured counts records passing the measure stage (may be nil).
	Measured *atomic.Int64
}

// payloads are the small strings records carry, precomputed.
var payloads = func() []string {
	p := make([]string, 64)
	for i := range p {
		p[i] = fmt.Sprintf("payload-%02d", i)
	}
	return p
}()

// Build makes the backpressure graph.
func Build(cfg Config) (*weir.Graph, error) {
	if cfg.Records < 0 && cfg.Records != weir.Unbounded {
		return nil, fmt.Errorf("backpressure: records %d must be ≥ 0 (or %d for unbounded)", cfg.Records, weir.Unbounded)
	}
	if cfg.Parallelism < 1 {
		return nil, fmt.Errorf("backpressure: parallelism %d must be ≥ 1", cfg.Parallelism)
	}
	if cfg.SleepMs < 0 {
		return nil, fmt.Errorf("backpressure: sleep-ms %v must be ≥ 0", cfg.SleepMs)
	}
	p := weir.Parallelism(cfg.Parallelism)
	g := weir.NewGraph("backpressure")
	src := weir.Generate(g, "source", cfg.Records, func(i int64) Record {
		return Record{Created: time.Now().UnixNano(), ID: i, Payload: payloads[i%int64(len(payloads))]}
	}, p)
	hop := func(r Record) Record { r.Hops++; return r }
	m1 := weir.Map(src.Shuffle(), "map-1", hop, p)
	m2 := weir.Map(m1.Shuffle(), "map-2", hop, p)
	per := time.Duration(cfg.SleepMs * float64(time.Millisecond))
	sleepers := weir.NewSleepers(per) // one per instance: instances run concurrently
	slow := weir.MapWithContext(m2.Shuffle(), "sleepy-map", func(ctx *weir.OpContext, r Record) Record {
		sleepers[ctx.Instance()].Tick()
		r.Hops++
		return r
	}, p)
	latency, measured := g.Latency, cfg.Measured
	out := weir.Map(slow.Shuffle(), "measure", func(r Record) Record {
		latency.Observe(time.Duration(time.Now().UnixNano() - r.Created))
		if measured != nil {
			measured.Add(1)
		}
		return r
	}, p)
	if cfg.Out != "" {
		weir.ToSink(out.Shuffle(), "sink", weir.FileSink[Record](cfg.Out))
	} else {
		weir.ToSink(out.Shuffle(), "sink", weir.DiscardSink[Record](nil), p)
	}
	return g, nil
}
