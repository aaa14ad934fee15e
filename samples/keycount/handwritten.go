package keycount

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/keygroups"
)

// Sizes of the hand-written pipeline, matching weir's defaults.
const (
	// HandwrittenBatch is the records per batch on every hop.
	HandwrittenBatch = 512
	// HandwrittenChannelBatches is the buffer, in batches, of every Go channel.
	HandwrittenChannelBatches = 8
	// handwrittenMaxParallelism is the number of key groups, as in weir.
	handwrittenMaxParallelism = 128
)

// HandwrittenResult is what a hand-written keycount run did.
type HandwrittenResult struct {
	RecordsIn  int64
	RecordsOut int64
	// CountSum is the sum of every output record's Count: K·m(m+1)/2 when N = m·K.
	CountSum int64
	// Keys is the number of distinct keys the counters saw.
	Keys     int
	Duration time.Duration
}

// RecordsPerSecond is input records per second of wall time.
func (r HandwrittenResult) RecordsPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.RecordsIn) / r.Duration.Seconds()
}

// RunHandwritten does keycount's work in plain Go, without weir, as the baseline
// weir is measured against: p generator goroutines (instance j makes records
// i = j, j+p, …), a hash shuffle by key group to p counter goroutines, and a
// forward hop to p discarding sink goroutines. Every hop carries typed batches
// of HandwrittenBatch records over Go channels buffered HandwrittenChannelBatches
// deep; emptied batches are recycled.
func RunHandwritten(n int64, k, p int) (HandwrittenResult, error) {
	if n < 0 {
		return HandwrittenResult{}, fmt.Errorf("handwritten keycount: records %d must be ≥ 0", n)
	}
	if k < 1 {
		return HandwrittenResult{}, fmt.Errorf("handwritten keycount: keys %d must be ≥ 1", k)
	}
	table, err := keygroups.Contiguous(handwrittenMaxParallelism, p)
	if err != nil {
		return HandwrittenResult{}, fmt.Errorf("handwritten keycount: parallelism %d: %w", p, err)
	}
	keys := Keys(k)
	counterIn := make([]chan []Event, p)
	sinkIn := make([]chan []Count, p)
	for i := 0; i < p; i++ {
		counterIn[i] = make(chan []Event, HandwrittenChannelBatches)
		sinkIn[i] = make(chan []Count, HandwrittenChannelBatches)
	}
	eventPool := newBatchPool[Event](p)
	countPool := newBatchPool[Count](p)

	var (
		in, out, sum atomic.Int64
		distinct     atomic.Int64
		gens, counts sync.WaitGroup
		sinks        sync.WaitGroup
	)
	start := time.Now()
	for j := 0; j < p; j++ {
		gens.Add(1)
		go func() {
			defer gens.Done()
			in.Add(generate(j, p, n, keys, table, counterIn, eventPool))
		}()
		counts.Add(1)
		go func() {
			defer counts.Done()
			distinct.Add(int64(count(counterIn[j], sinkIn[j], eventPool, countPool)))
		}()
		sinks.Add(1)
		go func() {
			defer sinks.Done()
			o, s := discardCounts(sinkIn[j], countPool)
			out.Add(o)
			sum.Add(s)
		}()
	}
	gens.Wait()
	for _, c := range counterIn {
		close(c)
	}
	counts.Wait()
	sinks.Wait()
	return HandwrittenResult{RecordsIn: in.Load(), RecordsOut: out.Load(), CountSum: sum.Load(),
		Keys: int(distinct.Load()), Duration: time.Since(start)}, nil
}

// generate is generator instance j of p: it makes its records, routes each by
// key group to a counter and returns how many it made.
func generate(j, p int, n int64, keys []string, table *keygroups.Table, outs []chan []Event, pool *batchPool[Event]) int64 {
	batches := make([][]Event, len(outs))
	for c := range batches {
		batches[c] = pool.get()
	}
	k := int64(len(keys))
	made := int64(0)
	for i := int64(j); i < n; i += int64(p) {
		e := Event{Key: keys[i%k], Seq: i}
		c := table.Owner(int(keygroups.HashKey(e.Key) % handwrittenMaxParallelism))
		b := append(batches[c], e)
		if len(b) == HandwrittenBatch {
			outs[c] <- b
			b = pool.get()
		}
		batches[c] = b
		made++
	}
	for c, b := range batches {
		if len(b) > 0 {
			outs[c] <- b
		}
	}
	return made
}

// count keeps running counts per key, emits one Count per Event to out, closes
// out at the end of in and returns the number of distinct keys it saw.
func count(in <-chan []Event, out chan<- []Count, events *batchPool[Event], pool *batchPool[Count]) int {
	counts := map[string]int64{}
	b := pool.get()
	for batch := range in {
		for _, e := range batch {
			c := counts[e.Key] + 1
			counts[e.Key] = c
			b = append(b, Count{Key: e.Key, Count: c})
			if len(b) == HandwrittenBatch {
				out <- b
				b = pool.get()
			}
		}
		events.put(batch)
	}
	if len(b) > 0 {
		out <- b
	}
	close(out)
	return len(counts)
}

// discardCounts drops every record and returns how many there were and the sum
// of their counts.
func discardCounts(in <-chan []Count, pool *batchPool[Count]) (n, sum int64) {
	for batch := range in {
		for _, c := range batch {
			sum += c.Count
		}
		n += int64(len(batch))
		pool.put(batch)
	}
	return n, sum
}

// batchPool recycles emptied batches through a bounded Go channel.
type batchPool[T any] struct{ free chan []T }

func newBatchPool[T any](p int) *batchPool[T] {
	return &batchPool[T]{free: make(chan []T, 2*p*p*HandwrittenChannelBatches+4*p)}
}

// get returns an empty batch with room for HandwrittenBatch records.
func (bp *batchPool[T]) get() []T {
	select {
	case b := <-bp.free:
		return b
	default:
		return make([]T, 0, HandwrittenBatch)
	}
}

// put returns a batch for reuse, or drops it when the pool is full. The old
// records are not cleared: they only point at the shared key strings.
func (bp *batchPool[T]) put(b []T) {
	select {
	case bp.free <- b[:0]:
	default:
	}
}
