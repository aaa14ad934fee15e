// Package bigstate is the state-heavy sample: keycount's records (i =
// 0..N-1, key fmt.Sprintf("k%06d", i % K)), and per key a value of
// ValueBytes bytes kept in keyed state and changed by every record of its
// key. Each record emits
// the key's update count and the CRC32C of its value after the update:
// {"key":"k000042","count":3,"crc":1234567}. With K keys the job holds
// about K × ValueBytes bytes of keyed state (1 M keys × 256 B is 256 MB).
package bigstate

import (
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// Digest is one output record: the key's update count and the checksum of
// its value after this record.
type Digest struct {
	Key   string `msgpack:"k" json:"key"`
	Count int64  `msgpack:"c" json:"count"`
	CRC   uint32 `msgpack:"x" json:"crc"`
}

// Entry is the keyed state of one key.
type Entry struct {
	Count int64  `msgpack:"c"`
	Value []byte `msgpack:"v"`
}

// Config sizes the job.
type Config struct {
	Records     int64   // N
	Keys        int     // K
	ValueBytes  int     // bytes of state per key
	Parallelism int     // of source and fill (the file sink runs once)
	Out         string  // JSON-lines file; empty means a discarding sink
	SleepMs     float64 // average sleep per record in the fill stage
	// Discarded counts records reaching the discarding sink (may be nil).
	Discarded *atomic.Int64
}

// castagnoli is the CRC32C table of the digests.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// InitialValue is a key's value before its first record.
func InitialValue(key string, n int) []byte {
	v := make([]byte, n)
	for j := range v {
		v[j] = key[j%len(key)] ^ byte(j)
	}
	return v
}

// Update changes v for the count-th record of its key: one byte per
// record, a different one each time, so every byte of a restored value
// matters to later digests.
func Update(v []byte, count int64) {
	v[int((count-1)%int64(len(v)))] += byte(count) | 1
}

// Checksum is the CRC32C of a value, as in Digest.
func Checksum(v []byte) uint32 { return crc32.Checksum(v, castagnoli) }

// Build makes the bigstate graph.
func Build(cfg Config) (*weir.Graph, error) {
	switch {
	case cfg.Records < 0 && cfg.Records != weir.Unbounded:
		return nil, fmt.Errorf("bigstate: records %d must be ≥ 0", cfg.Records)
	case cfg.Keys < 1:
		return nil, fmt.Errorf("bigstate: keys %d must be ≥ 1", cfg.Keys)
	case cfg.ValueBytes < 1:
		return nil, fmt.Errorf("bigstate: value bytes %d must be ≥ 1", cfg.ValueBytes)
	case cfg.Parallelism < 1:
		return nil, fmt.Errorf("bigstate: parallelism %d must be ≥ 1", cfg.Parallelism)
	case cfg.SleepMs < 0:
		return nil, fmt.Errorf("bigstate: sleep-ms %v must be ≥ 0", cfg.SleepMs)
	}
	keys := keycount.Keys(cfg.Keys)
	k := int64(cfg.Keys)
	g := weir.NewGraph("bigstate")
	events := weir.Generate(g, "source", cfg.Records, func(i int64) keycount.Event {
		return keycount.Event{Key: keys[i%k], Seq: i}
	}, weir.Parallelism(cfg.Parallelism))
	values := weir.NewValueState[Entry](g, "value")
	sleepers := make([]*weir.Sleeper, cfg.Parallelism) // one per instance: tasks run concurrently
	for i := range sleepers {
		sleepers[i] = weir.NewSleeper(time.Duration(cfg.SleepMs * float64(time.Millisecond)))
	}
	n := cfg.ValueBytes
	out := weir.Process(weir.KeyBy(events, func(e keycount.Event) string { return e.Key }), "fill",
		func(ctx *weir.KeyedContext[string], e keycount.Event, out *weir.Emitter[Digest]) error {
			sleepers[ctx.Instance()].Tick()
			s := values.Get(ctx)
			if s.Value == nil {
				s.Value = InitialValue(e.Key, n)
			}
			s.Count++
			Update(s.Value, s.Count)
			values.Set(ctx, s)
			out.Emit(Digest{Key: e.Key, Count: s.Count, CRC: Checksum(s.Value)})
			return nil
		}, weir.WithState(values), weir.Parallelism(cfg.Parallelism))
	if cfg.Out != "" {
		weir.ToSink(out, "sink", weir.FileSink[Digest](cfg.Out))
	} else {
		weir.ToSink(out, "sink", weir.DiscardSink[Digest](cfg.Discarded), weir.Parallelism(cfg.Parallelism))
	}
	return g, nil
}
