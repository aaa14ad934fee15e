package plan

// UnionFind is a disjoint-set forest over 0..n-1; the root of each set is
// its smallest member. The runtime groups task instances with it (failover
// regions, placement pipelines).
type UnionFind struct{ parent []int }

// NewUnionFind makes n singleton sets.
func NewUnionFind(n int) *UnionFind {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return &UnionFind{parent: p}
}

// Find returns the root (smallest member) of x's set.
func (u *UnionFind) Find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

// Union merges the sets of a and b.
func (u *UnionFind) Union(a, b int) {
	ra, rb := u.Find(a), u.Find(b)
	if ra != rb {
		u.parent[max(ra, rb)] = min(ra, rb)
	}
}
