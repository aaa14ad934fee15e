package inflight

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// Records knows the record type of one hash-partitioned edge, which a
// plan.Batch hides: it finds each record's key group and cuts batches, so
// that channel state can be split by key group.
type Records interface {
	// Group returns the key group of record i of b.
	Group(b plan.Batch, i int) (int, error)
	// Pick returns a batch of b's records at the ascending indices idx, in
	// that order.
	Pick(b plan.Batch, idx []int) (plan.Batch, error)
}

// RecordsOf returns the Records of an edge carrying T. hash is the edge's key
// hash, the one its writer routes by; maxParallelism is the job's. A batch
// that carries its key groups (plan.Grouped) is not hashed again.
func RecordsOf[T any](hash func(T) uint32, maxParallelism int) (Records, error) {
	if hash == nil {
		return nil, fmt.Errorf("records of %T: no key hash", *new(T))
	}
	if err := keygroups.Validate(maxParallelism, 1); err != nil {
		return nil, fmt.Errorf("records of %T: %w", *new(T), err)
	}
	return typedRecords[T]{hash: hash, groups: keygroups.NewDivisor(uint32(maxParallelism))}, nil
}

type typedRecords[T any] struct {
	hash   func(T) uint32
	groups keygroups.Divisor
}

func (r typedRecords[T]) Group(b plan.Batch, i int) (int, error) {
	if g, ok := b.(plan.Grouped[T]); ok && len(g.Groups) == len(g.Recs) {
		return int(g.Groups[i]), nil
	}
	recs, ok := plan.RecordsOf[T](b)
	if !ok {
		return 0, fmt.Errorf("batch is %T, want a batch of %T", b, *new(T))
	}
	return int(r.groups.Mod(r.hash(recs[i]))), nil
}

func (r typedRecords[T]) Pick(b plan.Batch, idx []int) (plan.Batch, error) {
	recs, ok := plan.RecordsOf[T](b)
	if !ok {
		return nil, fmt.Errorf("batch is %T, want a batch of %T", b, *new(T))
	}
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = recs[i]
	}
	g, ok := b.(plan.Grouped[T])
	if !ok || len(g.Groups) != len(g.Recs) {
		return plan.Records[T](out), nil
	}
	groups := make([]uint16, len(idx))
	for k, i := range idx {
		groups[k] = g.Groups[i]
	}
	return plan.Grouped[T]{Recs: out, Groups: groups}, nil
}
