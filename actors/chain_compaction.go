package actors

import (
	"cmp"
	"slices"
)

// chainsToCompact picks the key groups of chains that the next incremental
// checkpoint writes whole again (compacts) although a delta on their chain
// were possible. A chain is due once it holds maxDeltas deltas or has grown
// by more than ratio (groupChain.growth: what its deltas overwrote against
// the group's live keys); it is overdue at twice either limit. Every overdue
// chain is compacted, and of the due ones the most grown (then the longest,
// then the lowest group) up to a budget
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
		over, of := c.growth()
		switch {
		case deltas >= 2*maxDeltas || over > 2*ratio*of:
			out[g] = true
		case deltas >= maxDeltas || over > ratio*of:
			due = append(due, g)
		}
	}
	if left := budget - len(out); left > 0 && len(due) > 0 {
		slices.SortFunc(due, func(a, b int) int {
			ca, cb := chains[a], chains[b]
			overA, ofA := ca.growth()
			overB, ofB := cb.growth()
			// overA/ofA > overB/ofB, without dividing by zero.
			if c := cmp.Compare(overB*ofA, overA*ofB); c != 0 {
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
