package keygroups

import (
	"fmt"
	"slices"
)

// Rebalance plans the key-group table for newP instances starting from old,
// moving as few key groups as balance allows.
//
// Every instance of the result owns ⌊max/newP⌋ or ⌈max/newP⌉ key groups. The
// larger quotas go to the surviving instances that own the most groups now
// (ties to the lower index), each surviving instance keeps as many of its
// groups as its quota allows (its lowest-numbered ones), and the groups given
// up by overloaded or removed instances (indices ≥ newP) are handed, in
// ascending order, to the instances below quota in ascending instance order.
// The number of moved key groups is therefore the minimum any balanced table
// can achieve, and the result depends only on old and newP. The result's epoch
// is old's plus one.
func Rebalance(old *Table, newP int) (*Table, error) {
	if err := old.Validate(); err != nil {
		return nil, fmt.Errorf("rebalance: old table: %w", err)
	}
	maxP := old.MaxParallelism
	if err := Validate(maxP, newP); err != nil {
		return nil, fmt.Errorf("rebalance to %d instances: %w", newP, err)
	}

	cur := make([]int, newP) // groups each surviving instance owns now
	for _, o := range old.Owners {
		if int(o) < newP {
			cur[o]++
		}
	}

	q, r := maxP/newP, maxP%newP
	order := make([]int, newP)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cur[b] - cur[a] })
	quota := make([]int, newP)
	for k, i := range order {
		quota[i] = q
		if k < r {
			quota[i] = q + 1
		}
	}

	t := &Table{MaxParallelism: maxP, Parallelism: newP, Epoch: old.Epoch + 1, Owners: make([]int32, maxP)}
	have := make([]int, newP)
	var pool []int // groups to move, ascending
	for g, o := range old.Owners {
		if int(o) < newP && have[o] < quota[o] {
			t.Owners[g] = o
			have[o]++
			continue
		}
		pool = append(pool, g)
	}
	next := 0
	for i := 0; i < newP; i++ {
		for ; have[i] < quota[i]; have[i]++ {
			t.Owners[pool[next]] = int32(i)
			next++
		}
	}
	return t, nil
}
