package plan

import "testing"

// TestUnionFind: sets merge transitively and each is named by its smallest
// member, whatever the order of the unions.
func TestUnionFind(t *testing.T) {
	u := NewUnionFind(7)
	u.Union(5, 3)
	u.Union(6, 5)
	u.Union(1, 2)
	u.Union(2, 0)
	want := []int{0, 0, 0, 3, 4, 3, 3}
	for x, r := range want {
		if got := u.Find(x); got != r {
			t.Fatalf("Find(%d) = %d, want %d", x, got, r)
		}
	}
}
