package keygroups

import (
	"fmt"
	"testing"
)

// TestMinMovesFlinkExample: going from 4 to 5 instances of 128 key groups,
// Flink's contiguous ranges move 62 groups, the minimum is 25 (DESIGN.md).
func TestMinMovesFlinkExample(t *testing.T) {
	old, _ := Contiguous(128, 4)
	got, err := MinMoves(old, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got != 25 {
		t.Fatalf("min moves 4→5 of 128: %d, want 25", got)
	}
	flink, _ := Contiguous(128, 5)
	if n := len(old.Moved(flink)); n != 62 {
		t.Fatalf("contiguous 4→5 moves %d, want 62", n)
	}
}

// TestRescaleMovesTheMinimum: Rescale moves exactly MinMoves groups for every
// change of parallelism among small sizes, from contiguous and from rescaled
// tables (restore after restore).
func TestRescaleMovesTheMinimum(t *testing.T) {
	for _, max := range []int{1, 7, 16, 128} {
		for p := 1; p <= min(max, 9); p++ {
			first, _ := Contiguous(max, p)
			for q := 1; q <= min(max, 9); q++ {
				mid, _, err := first.Rescale(q)
				if err != nil {
					t.Fatal(err)
				}
				for _, from := range []*Table{first, mid} {
					for r := 1; r <= min(max, 9); r++ {
						t.Run(fmt.Sprintf("max=%d/%d→%d/epoch%d→%d", max, from.Parallelism, r, from.Epoch, from.Epoch+1), func(t *testing.T) {
							_, moves, err := from.Rescale(r)
							if err != nil {
								t.Fatal(err)
							}
							want, err := MinMoves(from, r)
							if err != nil {
								t.Fatal(err)
							}
							if len(moves) != want {
								t.Fatalf("moved %d, minimum %d", len(moves), want)
							}
						})
					}
				}
			}
		}
	}
}

func TestMinMovesRefusesBadInput(t *testing.T) {
	old, _ := Contiguous(8, 2)
	if _, err := MinMoves(old, 9); err == nil {
		t.Fatal("9 instances of 8 key groups: no error")
	}
	if _, err := MinMoves(&Table{MaxParallelism: 8, Parallelism: 2}, 2); err == nil {
		t.Fatal("table without owners: no error")
	}
}
