package keygroups

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// minMoves is the fewest key groups any balanced table for newP instances can
// move away from old, computed in closed form: an instance i < newP can keep
// min(cur_i, q) groups, plus one more if it owns more than q and is one of the
// r instances given a quota of q+1.
func minMoves(old *Table, newP int) int {
	q, r := old.MaxParallelism/newP, old.MaxParallelism%newP
	cur := old.Counts()
	kept, over := 0, 0
	for i := 0; i < newP && i < len(cur); i++ {
		kept += min(cur[i], q)
		if cur[i] > q {
			over++
		}
	}
	return old.MaxParallelism - kept - min(r, over)
}

// checkRebalance asserts that nt is a valid, balanced rebalance of old that
// moves the minimum number of groups and lets every surviving instance keep
// as many of its groups as its quota allows.
func checkRebalance(t *testing.T, old, nt *Table, newP int) {
	t.Helper()
	if err := nt.Validate(); err != nil {
		t.Fatalf("rebalanced table invalid: %v", err)
	}
	if nt.Parallelism != newP || nt.MaxParallelism != old.MaxParallelism {
		t.Fatalf("rebalanced table is %d/%d, want %d/%d", nt.MaxParallelism, nt.Parallelism, old.MaxParallelism, newP)
	}
	q := old.MaxParallelism / newP
	counts := nt.Counts()
	for i, n := range counts {
		if n != q && !(n == q+1 && old.MaxParallelism%newP != 0) {
			t.Fatalf("instance %d owns %d groups, want %d or %d", i, n, q, q+1)
		}
	}
	moved := len(old.Moved(nt))
	if want := minMoves(old, newP); moved != want {
		t.Fatalf("max %d %d→%d: moved %d groups, minimum is %d", old.MaxParallelism, old.Parallelism, newP, moved, want)
	}
	oldCounts := old.Counts()
	for i := 0; i < newP && i < old.Parallelism; i++ {
		kept := 0
		for _, g := range old.GroupsOf(i) {
			if nt.Owner(g) == i {
				kept++
			}
		}
		if kept != min(oldCounts[i], counts[i]) {
			t.Fatalf("instance %d kept %d of its %d groups with quota %d", i, kept, oldCounts[i], counts[i])
		}
	}
}

func TestRebalanceFourToFive(t *testing.T) {
	four, _ := Contiguous(128, 4)
	five, _ := Contiguous(128, 5)
	if got := len(four.Moved(five)); got != 62 {
		t.Fatalf("Flink ranges 4→5 move %d groups, want 62", got)
	}
	nt, err := Rebalance(four, 5)
	if err != nil {
		t.Fatal(err)
	}
	moved := len(four.Moved(nt))
	t.Logf("Rebalance 4→5 at max 128 moves %d groups (Flink's ranges: 62)", moved)
	if moved > 26 {
		t.Fatalf("Rebalance 4→5 moves %d groups, want ≤ 26", moved)
	}
	checkRebalance(t, four, nt, 5)
	// The new instance takes its groups from the four old ones.
	if got := len(nt.GroupsOf(4)); got != 25 && got != 26 {
		t.Fatalf("new instance owns %d groups", got)
	}
}

func TestRebalanceCases(t *testing.T) {
	cases := []struct{ max, oldP, newP int }{
		{128, 4, 4}, {128, 4, 5}, {128, 5, 4}, {128, 4, 3}, {128, 3, 7},
		{128, 1, 128}, {128, 128, 1}, {128, 2, 1}, {1, 1, 1}, {100, 7, 3},
		{129, 2, 128}, {32768, 6, 7}, {4096, 100, 64},
	}
	for _, c := range cases {
		old, err := Contiguous(c.max, c.oldP)
		if err != nil {
			t.Fatal(err)
		}
		nt, err := Rebalance(old, c.newP)
		if err != nil {
			t.Fatalf("Rebalance(%d/%d → %d): %v", c.max, c.oldP, c.newP, err)
		}
		checkRebalance(t, old, nt, c.newP)
		if c.oldP == c.newP && len(old.Moved(nt)) != 0 {
			t.Fatalf("same parallelism moved %d groups", len(old.Moved(nt)))
		}
	}
}

func TestRebalanceErrors(t *testing.T) {
	old, _ := Contiguous(128, 4)
	for _, p := range []int{0, -1, 129} {
		if _, err := Rebalance(old, p); !errors.Is(err, ErrInvalidParallelism) {
			t.Errorf("Rebalance(_, %d) error = %v, want ErrInvalidParallelism", p, err)
		}
	}
	bad := old.Clone()
	bad.Owners[0] = 9
	if _, err := Rebalance(bad, 4); !errors.Is(err, ErrInvalidTable) {
		t.Errorf("Rebalance(invalid table) error = %v, want ErrInvalidTable", err)
	}
	if _, err := Rebalance(nil, 4); !errors.Is(err, ErrInvalidTable) {
		t.Errorf("Rebalance(nil) error = %v, want ErrInvalidTable", err)
	}
}

// randomTable returns a valid, usually unbalanced table.
func randomTable(rng *rand.Rand, max, p int) *Table {
	t := &Table{MaxParallelism: max, Parallelism: p, Owners: make([]int32, max)}
	perm := rng.Perm(max)
	for k, g := range perm {
		if k < p {
			t.Owners[g] = int32(k) // every instance gets at least one group
		} else if rng.IntN(3) == 0 {
			t.Owners[g] = int32(rng.IntN(min(p, 2))) // skew towards the first instances
		} else {
			t.Owners[g] = int32(rng.IntN(p))
		}
	}
	return t
}

func TestRebalanceRandomTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 2))
	maxes := []int{1, 2, 3, 7, 100, 127, 128, 129, 1000, 4096}
	for n := 0; n < 500; n++ {
		max := maxes[rng.IntN(len(maxes))]
		oldP := 1 + rng.IntN(min(max, 40))
		newP := 1 + rng.IntN(min(max, 40))
		old := randomTable(rng, max, oldP)
		if err := old.Validate(); err != nil {
			t.Fatalf("randomTable: %v", err)
		}
		before := old.Clone()
		nt, err := Rebalance(old, newP)
		if err != nil {
			t.Fatalf("Rebalance(%d/%d → %d): %v", max, oldP, newP, err)
		}
		if !old.Equal(before) {
			t.Fatal("Rebalance modified its input")
		}
		checkRebalance(t, old, nt, newP)
		again, _ := Rebalance(old.Clone(), newP)
		if !nt.Equal(again) {
			t.Fatalf("Rebalance(%d/%d → %d) not deterministic", max, oldP, newP)
		}
		// Rebalancing a balanced table to its own parallelism moves nothing.
		same, _ := Rebalance(nt, newP)
		if !same.Equal(nt) {
			t.Fatalf("Rebalance of a balanced table to the same parallelism moved groups")
		}
	}
}

// Brute force for small tables: no balanced table moves fewer groups.
func TestRebalanceMinimalBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 3))
	for n := 0; n < 200; n++ {
		max := 1 + rng.IntN(6)
		oldP := 1 + rng.IntN(max)
		newP := 1 + rng.IntN(max)
		old := randomTable(rng, max, oldP)
		nt, err := Rebalance(old, newP)
		if err != nil {
			t.Fatal(err)
		}
		got := len(old.Moved(nt))
		best := max + 1
		owners := make([]int32, max)
		var walk func(g int)
		walk = func(g int) {
			if g == max {
				c := &Table{MaxParallelism: max, Parallelism: newP, Owners: owners}
				counts := c.Counts()
				lo, hi := max, 0
				for _, k := range counts {
					lo, hi = min(lo, k), maxInt(hi, k)
				}
				if hi-lo <= 1 {
					best = min(best, len(old.Moved(c)))
				}
				return
			}
			for i := 0; i < newP; i++ {
				owners[g] = int32(i)
				walk(g + 1)
			}
		}
		walk(0)
		if got != best {
			t.Fatalf("owners %v %d→%d: Rebalance moves %d, brute force finds %d", old.Owners, oldP, newP, got, best)
		}
	}
}

func BenchmarkRebalance128FourToFive(b *testing.B) {
	old, _ := Contiguous(128, 4)
	for b.Loop() {
		if _, err := Rebalance(old, 5); err != nil {
			b.Fatal(err)
		}
	}
}
