package weir

import (
	"fmt"
	"slices"
	"testing"
)

// readAll reads g to its end in batches of size and returns the indices.
func readAll(t *testing.T, g *generator[int64], size int) []int64 {
	t.Helper()
	var got []int64
	buf := make([]int64, size)
	for range 10000 {
		n, done, err := g.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		if done {
			return got
		}
	}
	t.Fatal("generator did not end")
	return nil
}

// newGenerator is instance of a generator of count indices opened at
// parallelism p.
func newGenerator(t *testing.T, count int64, instance, p int) *generator[int64] {
	t.Helper()
	g := &generator[int64]{count: count, gen: func(i int64) int64 { return i }, instance: instance}
	if err := g.Open(TaskInfo{Instance: instance, Parallelism: p}); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGeneratorFirstRunSplit: instance j of p serves split j of p, which
// produces j, j+p, …; its offset counts them.
func TestGeneratorFirstRunSplit(t *testing.T) {
	g := newGenerator(t, 11, 1, 3)
	if got, want := g.Splits(), []Split{{ID: 1, Of: 3}}; !slices.Equal(got, want) {
		t.Fatalf("splits %v, want %v", got, want)
	}
	if got, want := readAll(t, g, 2), []int64{1, 4, 7, 10}; !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if g.Offset() != 4 || g.Splits()[0].Offset != 4 {
		t.Fatalf("offset %d, splits %v, want 4", g.Offset(), g.Splits())
	}
}

// TestGeneratorSplitsMoveToOtherParallelism: splits read part way at
// parallelism 2 and dealt to 3, then 1 instances produce every index exactly
// once; an instance without splits is done at once, bounded or not.
func TestGeneratorSplitsMoveToOtherParallelism(t *testing.T) {
	const count = 101
	seen := map[int64]int{}
	note := func(ids []int64) {
		for _, i := range ids {
			seen[i]++
		}
	}
	var splits []Split
	for j := range 2 {
		g := newGenerator(t, count, j, 2)
		buf := make([]int64, 7+j*5)
		n, _, _ := g.Read(buf)
		note(buf[:n])
		splits = append(splits, g.Splits()...)
	}
	// At 3: instance 0 and 1 take a split each, instance 2 none.
	three := make([]*generator[int64], 3)
	for j := range 3 {
		three[j] = newGenerator(t, count, j, 3)
		var mine []Split
		if j < len(splits) {
			mine = splits[j : j+1]
		}
		if err := three[j].AssignSplits(mine); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]int64, 4)
	n, done, err := three[2].Read(buf)
	if n != 0 || !done || err != nil {
		t.Fatalf("instance without splits: read %d, done %v, %v; want 0, done", n, done, err)
	}
	// Part way again, then everything to one instance.
	splits = nil
	for j := range 2 {
		n, _, _ := three[j].Read(buf)
		note(buf[:n])
		splits = append(splits, three[j].Splits()...)
	}
	one := newGenerator(t, count, 0, 1)
	if err := one.AssignSplits(splits); err != nil {
		t.Fatal(err)
	}
	note(readAll(t, one, 3))
	for i := range int64(count) {
		if seen[i] != 1 {
			t.Fatalf("index %d produced %d times, want once (seen %v)", i, seen[i], fmt.Sprint(len(seen)))
		}
	}
	if len(seen) != count {
		t.Fatalf("%d indices, want %d", len(seen), count)
	}
	idle := &generator[int64]{count: Unbounded, gen: func(i int64) int64 { return i }}
	if err := idle.AssignSplits(nil); err != nil {
		t.Fatal(err)
	}
	if n, done, _ := idle.Read(buf); n != 0 || !done {
		t.Fatalf("unbounded instance without splits: read %d, done %v; want 0, done", n, done)
	}
}

// TestGeneratorReadsSplitsInTurn: an instance with two splits reads a batch
// from each in turn, and a split that runs out hands the rest of the batch
// to the next.
func TestGeneratorReadsSplitsInTurn(t *testing.T) {
	g := newGenerator(t, 10, 0, 1)
	if err := g.AssignSplits([]Split{{ID: 0, Of: 2}, {ID: 1, Of: 2, Offset: 3}}); err != nil {
		t.Fatal(err)
	}
	buf := make([]int64, 2)
	var batches [][]int64
	for range 10 {
		n, done, err := g.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, slices.Clone(buf[:n]))
		if done {
			break
		}
	}
	// Split 1 of 2 from offset 3: 7, 9. Split 0: 0, 2, 4, 6, 8.
	want := [][]int64{{0, 2}, {7, 9}, {4, 6}, {8}}
	if fmt.Sprint(batches) != fmt.Sprint(want) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
	if err := g.AssignSplits([]Split{{ID: 2, Of: 2}}); err == nil {
		t.Fatal("split 2 of 2 accepted")
	}
}
