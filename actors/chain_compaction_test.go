package actors

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/weirstream/weir/store"
)

// chainOf is a chain of a whole section of whole bytes and deltas of the
// given sizes.
func chainOf(whole int64, deltas ...int64) *groupChain {
	c := &groupChain{links: make([]store.ChainLink, 1+len(deltas)), wholeBytes: whole}
	for _, d := range deltas {
		c.deltaBytes += d
	}
	return c
}

// counted is a chain of n deltas (each of 1000 bytes on a whole section of
// 100) whose sections hold entries entries, live of them live.
func counted(n int, entries, live int64) *groupChain {
	c := chainOf(100, nDeltas(n, 1000)...)
	c.entries, c.live, c.counted = entries, live, true
	return c
}

// nDeltas is n deltas of size each.
func nDeltas(n int, size int64) []int64 { return slices.Repeat([]int64{size}, n) }

// TestChainsToCompact checks which chains the next checkpoint writes whole:
// none that is not due, every overdue one whatever the budget, and of the
// due ones the most grown up to ceil(chains/maxDeltas).
func TestChainsToCompact(t *testing.T) {
	cases := []struct {
		name   string
		chains map[int]*groupChain
		want   []int
	}{
		{"none", nil, nil},
		{"not due", map[int]*groupChain{1: chainOf(100, 10, 10), 2: chainOf(100, nDeltas(3, 1)...)}, nil},
		{"due by length, budget one", map[int]*groupChain{1: chainOf(100, nDeltas(4, 1)...), 2: chainOf(100, 1)}, []int{1}},
		{"due by ratio", map[int]*groupChain{7: chainOf(100, 51), 8: chainOf(100, 50)}, []int{7}},
		{"budget: most grown by ratio first", map[int]*groupChain{
			1: chainOf(100, nDeltas(4, 1)...), 2: chainOf(100, 60), 3: chainOf(1000, 600), 4: chainOf(100, 1),
		}, []int{2}},
		{"budget: longer chain breaks a tie", map[int]*groupChain{
			1: chainOf(100, nDeltas(4, 10)...), 2: chainOf(100, nDeltas(5, 8)...), 3: chainOf(100, 1), 4: chainOf(100, 1),
		}, []int{2}},
		{"budget: lower group breaks a tie", map[int]*groupChain{
			9: chainOf(100, nDeltas(4, 1)...), 3: chainOf(100, nDeltas(4, 1)...), 4: chainOf(100), 5: chainOf(100),
		}, []int{3}},
		{"budget of two over five chains", map[int]*groupChain{
			1: chainOf(100, nDeltas(4, 1)...), 2: chainOf(100, nDeltas(4, 2)...), 3: chainOf(100, nDeltas(4, 3)...), 4: chainOf(100), 5: chainOf(100),
		}, []int{2, 3}},
		{"overdue beyond the budget", map[int]*groupChain{
			1: chainOf(100, nDeltas(8, 1)...), 2: chainOf(100, 101), 3: chainOf(100, nDeltas(4, 50)...), 4: chainOf(100),
		}, []int{1, 2, 3}},
		{"overdue use the budget up", map[int]*groupChain{
			1: chainOf(100, nDeltas(8, 1)...), 2: chainOf(100, nDeltas(5, 1)...), 3: chainOf(100), 4: chainOf(100),
		}, []int{1}},
		{"empty whole section", map[int]*groupChain{1: chainOf(0, 1), 2: chainOf(0)}, []int{1}},
		{"counted: deltas that only add keys are not due, whatever their bytes", map[int]*groupChain{
			1: counted(3, 1000, 1000), 2: counted(1, 50, 50),
		}, nil},
		{"counted: due by what deltas overwrote", map[int]*groupChain{1: counted(1, 151, 100), 2: counted(1, 150, 100)}, []int{1}},
		{"counted: overdue, and an emptied group", map[int]*groupChain{
			3: counted(1, 201, 100), 4: counted(1, 10, 0), 5: counted(1, 199, 100), 6: counted(1, 100, 100),
		}, []int{3, 4}},
		{"counted: most overwritten first", map[int]*groupChain{
			1: counted(1, 160, 100), 2: counted(1, 180, 100), 3: counted(1, 100, 100), 4: counted(1, 100, 100),
		}, []int{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(chainsToCompact(c.chains, 4, 0.5)))
			if !slices.Equal(got, c.want) {
				t.Fatalf("compacted %v, want %v", got, c.want)
			}
		})
	}
}

// TestChainsToCompactSpreadsAFill runs 64 key groups written whole at the
// same checkpoint (a fill, a restore) through 300 checkpoints that each
// change 1 % of every group, with 32 deltas due: the groups come due
// together, but no checkpoint writes more than 2 whole (ceil(64/32)), so
// none writes more than 5 % of the state, no chain grows past 64 deltas,
// and each group is written whole about every 32 checkpoints. Writing every
// due group at once, as before, rewrites all 64 together.
func TestChainsToCompactSpreadsAFill(t *testing.T) {
	const groups, whole, delta, maxDeltas = 64, 10000, 100, 32
	for _, spread := range []bool{true, false} {
		t.Run(fmt.Sprintf("spread=%v", spread), func(t *testing.T) {
			chains := map[int]*groupChain{}
			for g := range groups {
				chains[g] = chainOf(whole)
			}
			var maxWhole, compactions, longest int
			var maxWritten int64
			for ck := 1; ck <= 300; ck++ {
				compact := chainsToCompact(chains, maxDeltas, 0.5)
				if !spread {
					compact = map[int]bool{}
					for g, c := range chains {
						if len(c.links)-1 >= maxDeltas || float64(c.deltaBytes) > 0.5*float64(c.wholeBytes) {
							compact[g] = true
						}
					}
				}
				var written int64
				for g, c := range chains {
					if compact[g] {
						chains[g] = chainOf(whole)
						written += whole
						continue
					}
					c.links = append(c.links, store.ChainLink{})
					c.deltaBytes += delta
					written += delta
					longest = max(longest, len(c.links)-1)
				}
				maxWhole = max(maxWhole, len(compact))
				compactions += len(compact)
				maxWritten = max(maxWritten, written)
			}
			if !spread {
				if maxWhole != groups {
					t.Fatalf("writing every due group at once wrote %d whole in one checkpoint, want all %d", maxWhole, groups)
				}
				return
			}
			if maxWhole > 2 {
				t.Errorf("a checkpoint wrote %d groups whole, want ≤ 2", maxWhole)
			}
			if share := float64(maxWritten) / (groups * whole); share > 0.05 {
				t.Errorf("a checkpoint wrote %.1f %% of the state, want ≤ 5 %%", 100*share)
			}
			if longest > 2*maxDeltas {
				t.Errorf("a chain grew to %d deltas, want ≤ %d", longest, 2*maxDeltas)
			}
			// 300 checkpoints, each group written whole every 33 to 64.
			if compactions < groups*300/65 || compactions > groups*300/33 {
				t.Errorf("%d compactions in 300 checkpoints of %d groups", compactions, groups)
			}
		})
	}
}
