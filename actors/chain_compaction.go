package actors

import (
	"cmp"
	"slices"
)

// chainsToCompact picks the key groups of chains that the next incremental
// checkpoint writes whole again (compacts) although a delta on their chain
// were possible. A chain is due once it holds maxDeltas deltas or its deltas
// add up to more than ratio of its whole section; it is overdue at twice
// either limit. Every overdue chain is compacted, and of the due ones the
// most grown (deltas against whole, then length, then group) up to a budget
// of ceil(chains/maxDeltas) in all: so the groups written whole in one
// checkpoint (a fill, a restore, a rescale) are not all rewritten together
// when their chains come due, but over the following checkpoints, and a
// checkpoint's size stays near its deltas plus 1/maxDeltas of the state.
func chainsToCompact(chains map[int]*groupChain, maxDeltas int, ratio float64) map[int]bool {
	if len(chains) == 0 || maxDeltas < 1 {
		return nil
	}
	budget := (len(chains) + maxDeltas - 1) / maxDeltas
	out := map[int]bool{}
	var due []int
	for g, c := range chains {
		deltas := len(c.links) - 1
		grown := float64(c.deltaBytes)
		switch {
		case deltas >= 2*maxDeltas || grown > 2*ratio*float64(c.wholeBytes):
			out[g] = true
		case deltas >= maxDeltas || grown > ratio*float64(c.wholeBytes):
			due = append(due, g)
		}
	}
	if left := budget - len(out); left > 0 && len(due) > 0 {
		slices.SortFunc(due, func(a, b int) int {
			ca, cb := chains[a], chains[b]
			// deltaA/wholeA > deltaB/wholeB, without dividing by zero.
			if c := cmp.Compare(float64(cb.deltaBytes)*float64(ca.wholeBytes), float64(ca.deltaBytes)*float64(cb.wholeBytes)); c != 0 {
				return c
			}
			if c := cmp.Compare(len(cb.links), len(ca.links)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for _, g := range due[:min(left, len(due))] {
			out[g] = true
		}
	}
	return out
}
