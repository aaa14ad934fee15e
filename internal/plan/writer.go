package plan

import (
	"fmt"

	"github.com/weirstream/weir/keygroups"
)

// WriterConfig is what an EdgeWriter needs to know about its task and edge.
type WriterConfig struct {
	Edge *Edge
	// Instance is the producing task's instance index.
	Instance int
	// Channels is the number of consumer instances on the edge.
	Channels       int
	MaxParallelism int
	// BatchSize is the number of records at which a batch is full.
	BatchSize int
	// Seal receives every batch as soon as it is full.
	Seal func(channel int, b Batch)
}

// Writer is the EdgeWriter for records of type T: it routes each record by the
// edge's partitioner and appends it to that channel's batch.
type Writer[T any] struct {
	part     Partitioner
	instance int
	n        int
	next     int    // rebalance position
	rnd      uint64 // shuffle state
	hash     func(T) uint32
	owners   []int32
	groups   keygroups.Divisor
	size     int
	cur      [][]T
	curGroup [][]uint16 // KeyGroupHash: the key group of each record in cur
	seal     func(int, Batch)
	pool     *Pool[T]
}

// NewWriter makes the writer of an edge carrying T. hash is the stable key hash
// of a record; KeyGroupHash edges need it, the others ignore it. New batches
// come from pool (nil: allocate). It returns an error for an unknown
// partitioner, a hash edge without hash, or more channels than key groups.
func NewWriter[T any](cfg WriterConfig, hash func(T) uint32, pool *Pool[T]) (*Writer[T], error) {
	e := cfg.Edge
	if cfg.Channels < 1 || cfg.BatchSize < 1 {
		return nil, fmt.Errorf("edge %s→%s: %d channels and batch size %d, want at least 1 each", e.From.Name, e.To.Name, cfg.Channels, cfg.BatchSize)
	}
	w := &Writer[T]{part: e.Partitioner, instance: cfg.Instance, n: cfg.Channels, size: cfg.BatchSize,
		seal: cfg.Seal, cur: make([][]T, cfg.Channels), pool: pool}
	switch e.Partitioner {
	case Forward, Broadcast:
	case Rebalance:
		w.next = cfg.Instance % cfg.Channels
	case Shuffle:
		// xorshift64*, seeded per producer and edge so runs are repeatable.
		w.rnd = uint64(cfg.Instance)*0x9E3779B97F4A7C15 + uint64(e.ID) + 1
	case KeyGroupHash:
		if hash == nil {
			return nil, fmt.Errorf("edge %s→%s: hash partitioning without a key function", e.From.Name, e.To.Name)
		}
		table := e.To.Table
		if table == nil {
			return nil, fmt.Errorf("edge %s→%s: hash partitioning and %q has no key-group table", e.From.Name, e.To.Name, e.To.Name)
		}
		if table.Parallelism != cfg.Channels || table.MaxParallelism != cfg.MaxParallelism {
			return nil, fmt.Errorf("edge %s→%s: key-group table for %d instances of %d key groups, edge has %d channels of %d",
				e.From.Name, e.To.Name, table.Parallelism, table.MaxParallelism, cfg.Channels, cfg.MaxParallelism)
		}
		w.hash, w.owners, w.groups = hash, table.Owners, keygroups.NewDivisor(uint32(cfg.MaxParallelism))
	default:
		return nil, fmt.Errorf("edge %s→%s: unknown partitioner %v", e.From.Name, e.To.Name, e.Partitioner)
	}
	for c := range w.cur {
		w.cur[c] = w.pool.get(w.size)
	}
	if w.hash != nil {
		w.curGroup = make([][]uint16, cfg.Channels)
		for c := range w.curGroup {
			w.curGroup[c] = w.pool.getGroups(w.size)
		}
	}
	return w, nil
}

// Route returns the channel a record goes to; -1 means every channel
// (broadcast). It advances the rebalance and shuffle state.
func (w *Writer[T]) Route(v T) int {
	switch w.part {
	case KeyGroupHash:
		return int(w.owners[w.keyGroup(v)])
	case Forward:
		return w.instance
	case Rebalance:
		c := w.next
		w.next++
		if w.next == w.n {
			w.next = 0
		}
		return c
	case Shuffle:
		s := w.rnd
		s ^= s >> 12
		s ^= s << 25
		s ^= s >> 27
		w.rnd = s
		return int((s * 2685821657736338717) >> 33 % uint64(w.n))
	}
	return -1
}

// keyGroup is the key group of a record on a KeyGroupHash edge.
func (w *Writer[T]) keyGroup(v T) uint32 { return w.groups.Mod(w.hash(v)) }

// Write routes one record and appends it to its channel's batch (to every
// channel's, for broadcast), sealing batches that become full. On a hash
// edge the record's key group goes along.
func (w *Writer[T]) Write(v T) {
	if w.hash != nil {
		g := w.keyGroup(v)
		c := int(w.owners[g])
		w.curGroup[c] = append(w.curGroup[c], uint16(g))
		w.add(c, v)
		return
	}
	c := w.Route(v)
	if c >= 0 {
		w.add(c, v)
		return
	}
	for c := range w.cur {
		w.add(c, v)
	}
}

func (w *Writer[T]) add(c int, v T) {
	b := append(w.cur[c], v)
	if len(b) < w.size {
		w.cur[c] = b
		return
	}
	w.cur[c] = w.pool.get(w.size)
	w.seal(c, w.batch(c, b))
}

// batch makes the batch of channel c from its records, taking their key
// groups along on a hash edge.
func (w *Writer[T]) batch(c int, recs []T) Batch {
	if w.hash == nil {
		return Records[T](recs)
	}
	groups := w.curGroup[c]
	w.curGroup[c] = w.pool.getGroups(w.size)
	return Grouped[T]{Recs: recs, Groups: groups}
}

// Pending is the number of records in channel c's partially filled batch.
func (w *Writer[T]) Pending(c int) int { return len(w.cur[c]) }

// Take removes and returns channel c's partially filled batch; nil when empty.
func (w *Writer[T]) Take(c int) Batch {
	b := w.cur[c]
	if len(b) == 0 {
		return nil
	}
	w.cur[c] = w.pool.get(w.size)
	return w.batch(c, b)
}
