package keygroups

import (
	"errors"
	"fmt"
)

// DefaultMaxParallelism is the number of key groups a job has unless it says
// otherwise.
const DefaultMaxParallelism = 128

// MaxMaxParallelism is the largest maxParallelism weir accepts.
const MaxMaxParallelism = 32768

// ErrInvalidParallelism is returned (wrapped) when a maxParallelism or
// parallelism is out of range.
var ErrInvalidParallelism = errors.New("invalid parallelism")

// Validate checks 1 ≤ p ≤ max ≤ MaxMaxParallelism.
func Validate(max, p int) error {
	switch {
	case max < 1:
		return fmt.Errorf("maxParallelism %d: must be at least 1: %w", max, ErrInvalidParallelism)
	case max > MaxMaxParallelism:
		return fmt.Errorf("maxParallelism %d: must be at most %d: %w", max, MaxMaxParallelism, ErrInvalidParallelism)
	case p < 1:
		return fmt.Errorf("parallelism %d: must be at least 1: %w", p, ErrInvalidParallelism)
	case p > max:
		return fmt.Errorf("parallelism %d: must not exceed maxParallelism %d: %w", p, max, ErrInvalidParallelism)
	}
	return nil
}

// Range is an inclusive range of key groups [Start, End]. It is empty when
// End < Start.
type Range struct {
	Start int `msgpack:"start"`
	End   int `msgpack:"end"`
}

// Len returns the number of key groups in r.
func (r Range) Len() int {
	if r.End < r.Start {
		return 0
	}
	return r.End - r.Start + 1
}

// Contains reports whether key group g is in r.
func (r Range) Contains(g int) bool {
	return g >= r.Start && g <= r.End
}

// String formats r as "[start-end]".
func (r Range) String() string {
	return fmt.Sprintf("[%d-%d]", r.Start, r.End)
}

// RangeFor returns Flink's contiguous key-group range of instance i of p when
// there are max key groups: start = ⌈i·max/p⌉, end = ⌊((i+1)·max − 1)/p⌋.
// It expects Validate(max, p) == nil and 0 ≤ i < p.
func RangeFor(max, p, i int) Range {
	return Range{
		Start: (i*max + p - 1) / p,
		End:   ((i+1)*max - 1) / p,
	}
}

// OwnerOf returns the instance that owns key group g under Flink's contiguous
// ranges: ⌊g·p/max⌋. It expects Validate(max, p) == nil and 0 ≤ g < max.
func OwnerOf(g, max, p int) int {
	return g * p / max
}
