package keygroups

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Every first table agrees with the contiguous-range formula, written out
// here rather than taken from RangeFor or OwnerOf.
func TestContiguousAgreesWithRangeFormula(t *testing.T) {
	maxes := []int{128}
	for m := 1; m <= 16; m++ {
		maxes = append(maxes, m)
	}
	for _, max := range maxes {
		for p := 1; p <= max; p++ {
			tab, err := Contiguous(max, p)
			if err != nil {
				t.Fatalf("Contiguous(%d, %d): %v", max, p, err)
			}
			if tab.Epoch != 0 || tab.Parallelism != p || tab.MaxParallelism != max {
				t.Fatalf("Contiguous(%d, %d) = max %d, p %d, epoch %d", max, p, tab.MaxParallelism, tab.Parallelism, tab.Epoch)
			}
			if err := tab.Validate(); err != nil {
				t.Fatalf("Contiguous(%d, %d): %v", max, p, err)
			}
			for g := 0; g < max; g++ {
				if got, want := tab.Owner(g), g*p/max; got != want {
					t.Fatalf("max %d p %d: Owner(%d) = %d, want ⌊g·p/max⌋ = %d", max, p, g, got, want)
				}
			}
			for i := 0; i < p; i++ {
				start := (i*max + p - 1) / p // ⌈i·max/p⌉
				end := ((i+1)*max - 1) / p   // ⌊((i+1)·max − 1)/p⌋
				var want []int
				for g := start; g <= end; g++ {
					want = append(want, g)
				}
				if got := tab.GroupsOf(i); !slices.Equal(got, want) {
					t.Fatalf("max %d p %d: GroupsOf(%d) = %v, want %d…%d", max, p, i, got, start, end)
				}
			}
		}
	}
}

func TestFromOwners(t *testing.T) {
	owners := []int32{1, 0, 2, 1, 0, 2, 2, 0}
	tab, err := FromOwners(8, 3, 7, owners)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Epoch != 7 || tab.Parallelism != 3 || tab.MaxParallelism != 8 || !slices.Equal(tab.Owners, owners) {
		t.Fatalf("FromOwners made %+v", tab)
	}
	if got := tab.GroupsOf(2); !slices.Equal(got, []int{2, 5, 6}) {
		t.Fatalf("GroupsOf(2) = %v", got)
	}
	owners[0] = 2
	if tab.Owner(0) != 1 {
		t.Fatal("FromOwners shares the caller's slice")
	}

	cases := []struct {
		name   string
		max, p int
		owners []int32
		want   error
	}{
		{"short", 8, 2, []int32{0, 1, 0, 1, 0, 1, 0}, ErrInvalidTable},
		{"long", 4, 2, []int32{0, 1, 0, 1, 0}, ErrInvalidTable},
		{"none", 4, 2, nil, ErrInvalidTable},
		{"owner = p", 4, 2, []int32{0, 1, 2, 1}, ErrInvalidTable},
		{"negative owner", 4, 2, []int32{0, 1, -1, 1}, ErrInvalidTable},
		{"idle instance", 4, 3, []int32{0, 1, 0, 1}, ErrInvalidTable},
		{"p 0", 4, 0, []int32{0, 0, 0, 0}, ErrInvalidParallelism},
		{"p > max", 2, 3, []int32{0, 1}, ErrInvalidParallelism},
		{"max too large", MaxMaxParallelism + 1, 1, nil, ErrInvalidParallelism},
	}
	for _, c := range cases {
		_, err := FromOwners(c.max, c.p, 1, c.owners)
		if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidTable) {
			t.Errorf("%s: FromOwners error = %v, want %v and ErrInvalidTable", c.name, err, c.want)
		}
	}
}

// checkRescale asserts Rescale's contract for one step from old to newP.
func checkRescale(t *testing.T, old *Table, newP int) *Table {
	t.Helper()
	before := old.Clone()
	nt, moves, err := old.Rescale(newP)
	if err != nil {
		t.Fatalf("Rescale(%d → %d): %v", old.Parallelism, newP, err)
	}
	if !old.Equal(before) || old.Epoch != before.Epoch {
		t.Fatalf("Rescale changed the old table")
	}
	if nt.Epoch != old.Epoch+1 {
		t.Fatalf("Rescale epoch %d → %d, want %d", old.Epoch, nt.Epoch, old.Epoch+1)
	}
	checkRebalance(t, old, nt, newP) // balanced within one; minimum moves; kept groups
	if len(moves) != minMoves(old, newP) {
		t.Fatalf("%d → %d: %d moves, minimum %d", old.Parallelism, newP, len(moves), minMoves(old, newP))
	}
	var groups []int
	for _, m := range moves {
		if m.From != old.Owner(m.Group) || m.To != nt.Owner(m.Group) || m.From == m.To {
			t.Fatalf("move %+v: old owner %d, new owner %d", m, old.Owner(m.Group), nt.Owner(m.Group))
		}
		groups = append(groups, m.Group)
	}
	if !slices.Equal(groups, old.Moved(nt)) {
		t.Fatalf("moves %v are not the changed groups %v, ascending", groups, old.Moved(nt))
	}
	return nt
}

// Random chains of rescales at max 128, from first tables and from arbitrary
// stored ones: each step balanced within one group and moving exactly the
// minimum that balance allows.
func TestRescaleRandomChains(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	for n := 0; n < 200; n++ {
		tab, err := Contiguous(128, 1+rng.IntN(128))
		if err != nil {
			t.Fatal(err)
		}
		if n%2 == 1 { // a stored table need not be contiguous or balanced
			tab = randomTable(rng, 128, 1+rng.IntN(128))
		}
		for step := 0; step < 5; step++ {
			newP := 1 + rng.IntN(128)
			if rng.IntN(2) == 0 { // small steps are the common case
				newP = min(128, max(1, tab.Parallelism+rng.IntN(5)-2))
			}
			tab = checkRescale(t, tab, newP)
		}
	}
}

func TestRescaleFourToFiveMovesTwentyFive(t *testing.T) {
	four, _ := Contiguous(128, 4)
	five, _ := Contiguous(128, 5)
	if got := len(four.Moved(five)); got != 62 {
		t.Fatalf("Flink's ranges 4→5 move %d groups, want 62", got)
	}
	nt := checkRescale(t, four, 5)
	_, moves, _ := four.Rescale(5)
	if len(moves) != 25 {
		t.Fatalf("Rescale 4→5 moves %d groups, want 25", len(moves))
	}
	for _, m := range moves {
		if m.To != 4 {
			t.Fatalf("move %+v: only the new instance 4 should receive groups", m)
		}
	}
	if got := len(nt.GroupsOf(4)); got != 25 {
		t.Fatalf("new instance owns %d groups, want 25", got)
	}
}

func TestRescaleSameParallelismMovesNothing(t *testing.T) {
	tab, _ := Contiguous(128, 6)
	nt, moves, err := tab.Rescale(6)
	if err != nil {
		t.Fatal(err)
	}
	if len(moves) != 0 || !nt.Equal(tab) || nt.Epoch != 1 {
		t.Fatalf("Rescale(6) of a 6-instance table: %d moves, epoch %d", len(moves), nt.Epoch)
	}
}

func TestRescaleRejectsBadParallelism(t *testing.T) {
	tab, _ := Contiguous(128, 4)
	for _, p := range []int{0, -2, 129} {
		if _, _, err := tab.Rescale(p); !errors.Is(err, ErrInvalidParallelism) {
			t.Errorf("Rescale(%d) error = %v, want ErrInvalidParallelism", p, err)
		}
	}
	var nilTab *Table
	if _, _, err := nilTab.Rescale(2); !errors.Is(err, ErrInvalidTable) {
		t.Errorf("nil table: Rescale error = %v, want ErrInvalidTable", err)
	}
}

func TestTableEpochSurvivesMsgpack(t *testing.T) {
	tab, _ := Contiguous(16, 3)
	nt, _, _ := tab.Rescale(5)
	b, err := msgpack.Marshal(nt)
	if err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := msgpack.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(nt) || back.Epoch != 1 {
		t.Fatalf("round trip gave %+v, want %+v", back, *nt)
	}
}
