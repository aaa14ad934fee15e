package keygroups

import (
	"fmt"
	"slices"
)

// MinMoves returns the fewest key groups any balanced table for newP
// instances (each owning ⌊max/newP⌋ or ⌈max/newP⌉ groups) must take from
// old's owners: every group of an instance that goes away, and each surviving
// instance's groups beyond the largest quota it can get, where the ⌈max/newP⌉
// quotas go to the survivors that own the most. It is the bound a rescale is
// judged against.
func MinMoves(old *Table, newP int) (int, error) {
	if err := old.Validate(); err != nil {
		return 0, fmt.Errorf("min moves: old table: %w", err)
	}
	if err := Validate(old.MaxParallelism, newP); err != nil {
		return 0, fmt.Errorf("min moves to %d instances: %w", newP, err)
	}
	counts := old.Counts()
	moves := 0
	var survivors []int
	for i, n := range counts {
		if i < newP {
			survivors = append(survivors, n)
		} else {
			moves += n
		}
	}
	slices.SortFunc(survivors, func(a, b int) int { return b - a })
	q, r := old.MaxParallelism/newP, old.MaxParallelism%newP
	for k, n := range survivors {
		quota := q
		if k < r {
			quota++
		}
		moves += max(0, n-quota)
	}
	return moves, nil
}
