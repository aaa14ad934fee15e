package keygroups

import (
	"errors"
	"fmt"
	"slices"
)

// ErrInvalidTable is returned (wrapped) by Table.Validate for a table that
// does not assign every key group to a valid instance.
var ErrInvalidTable = errors.New("invalid key-group table")

// Table is the explicit assignment of key groups to the parallel instances of
// one keyed operator: Owners[g] is the index of the instance that owns key
// group g. Epoch counts the rescales since the job's first table (epoch 0).
// It is stored in every checkpoint manifest.
//
// A Table is never changed once made (by Contiguous, FromOwners or Rescale):
// its fields are exported so that it encodes with msgpack and so that routers
// can read Owners on the hot path, not so that anyone writes them. A rescale
// makes a new Table.
type Table struct {
	MaxParallelism int     `msgpack:"max"`
	Parallelism    int     `msgpack:"p"`
	Epoch          uint64  `msgpack:"epoch"`
	Owners         []int32 `msgpack:"owners"`
}

// Contiguous returns a job's first table, epoch 0: Flink's contiguous ranges
// for max key groups and p instances (see RangeFor and OwnerOf).
func Contiguous(max, p int) (*Table, error) {
	if err := Validate(max, p); err != nil {
		return nil, fmt.Errorf("contiguous table: %w", err)
	}
	t := &Table{MaxParallelism: max, Parallelism: p, Owners: make([]int32, max)}
	for i := 0; i < p; i++ {
		r := RangeFor(max, p, i)
		for g := r.Start; g <= r.End; g++ {
			t.Owners[g] = int32(i)
		}
	}
	return t, nil
}

// Owner returns the instance that owns key group g. g must be in [0, max).
func (t *Table) Owner(g int) int {
	return int(t.Owners[g])
}

// GroupsOf returns the key groups owned by instance i, ascending.
func (t *Table) GroupsOf(i int) []int {
	var gs []int
	for g, o := range t.Owners {
		if int(o) == i {
			gs = append(gs, g)
		}
	}
	return gs
}

// Counts returns how many key groups each instance owns, indexed by instance.
// Owners outside [0, Parallelism) are not counted.
func (t *Table) Counts() []int {
	c := make([]int, max(t.Parallelism, 0))
	for _, o := range t.Owners {
		if o >= 0 && int(o) < len(c) {
			c[o]++
		}
	}
	return c
}

// Validate checks that the parallelism is valid, that there is one owner per
// key group, that every owner is an instance in [0, Parallelism), and that
// every instance owns at least one key group.
func (t *Table) Validate() error {
	if t == nil {
		return fmt.Errorf("nil table: %w", ErrInvalidTable)
	}
	if err := Validate(t.MaxParallelism, t.Parallelism); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidTable, err)
	}
	if len(t.Owners) != t.MaxParallelism {
		return fmt.Errorf("%d owners for %d key groups: %w", len(t.Owners), t.MaxParallelism, ErrInvalidTable)
	}
	for g, o := range t.Owners {
		if o < 0 || int(o) >= t.Parallelism {
			return fmt.Errorf("key group %d owned by instance %d, parallelism %d: %w", g, o, t.Parallelism, ErrInvalidTable)
		}
	}
	for i, n := range t.Counts() {
		if n == 0 {
			return fmt.Errorf("instance %d owns no key group: %w", i, ErrInvalidTable)
		}
	}
	return nil
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	if t == nil {
		return nil
	}
	c := *t
	c.Owners = slices.Clone(t.Owners)
	return &c
}

// Equal reports whether t and o describe the same assignment; the epochs are
// not compared.
func (t *Table) Equal(o *Table) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.MaxParallelism == o.MaxParallelism &&
		t.Parallelism == o.Parallelism &&
		slices.Equal(t.Owners, o.Owners)
}

// Moved returns, ascending, the key groups whose owner differs between t and
// o. Both tables are expected to have the same MaxParallelism; a key group
// present in only one of them counts as moved.
func (t *Table) Moved(o *Table) []int {
	n := max(len(t.Owners), len(o.Owners))
	var moved []int
	for g := 0; g < n; g++ {
		if g >= len(t.Owners) || g >= len(o.Owners) || t.Owners[g] != o.Owners[g] {
			moved = append(moved, g)
		}
	}
	return moved
}
