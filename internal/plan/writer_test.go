package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroups"
)

// testEdge is an edge between two named operators, enough for a writer.
func testEdge(p Partitioner, fromP, toP int) *Edge {
	return &Edge{
		ID:          3,
		From:        &Operator{Name: "up", Parallelism: fromP},
		To:          &Operator{Name: "down", Parallelism: toP},
		Partitioner: p,
	}
}

// newTestWriter makes a writer of string-keyed records whose full batches go
// to sealed.
func newTestWriter(edge *Edge, instance, n, max, batch int, sealed func(int, Batch)) (*Writer[any], error) {
	withFirstTable(edge, max)
	return NewWriter(WriterConfig{Edge: edge, Instance: instance, Channels: n, MaxParallelism: max, BatchSize: batch, Seal: sealed},
		func(rec any) uint32 { return keygroups.HashKey(rec.(string)) }, nil)
}

// withFirstTable gives a hash edge's consumer the job's first table, as
// Validate does, unless it has one or the sizes are invalid.
func withFirstTable(edge *Edge, max int) *Edge {
	if edge.Partitioner == KeyGroupHash && edge.To.Table == nil {
		edge.To.Table, _ = keygroups.Contiguous(max, edge.To.Parallelism)
	}
	return edge
}

// router returns the routing function of a new writer.
func router(t testing.TB, edge *Edge, instance, n, max int) func(any) int {
	t.Helper()
	w, err := newTestWriter(edge, instance, n, max, 1, func(int, Batch) {})
	if err != nil {
		t.Fatal(err)
	}
	return w.Route
}

func TestRouterForwardReturnsInstance(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		for instance := 0; instance < n; instance++ {
			route := router(t, testEdge(Forward, n, n), instance, n, 128)
			for k := 0; k < 10; k++ {
				if got := route(int64(k)); got != instance {
					t.Fatalf("n=%d instance %d record %d: channel %d, want %d", n, instance, k, got, instance)
				}
			}
		}
	}
}

func TestRouterRebalanceRoundRobin(t *testing.T) {
	tests := []struct{ instance, n int }{
		{0, 1}, {3, 1}, {0, 2}, {1, 2}, {0, 3}, {1, 3}, {2, 3}, {4, 3}, {7, 5}, {5, 5},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("instance=%d/n=%d", tc.instance, tc.n), func(t *testing.T) {
			route := router(t, testEdge(Rebalance, tc.instance+1, tc.n), tc.instance, tc.n, 128)
			counts := make([]int, tc.n)
			for k := 0; k < 4*tc.n; k++ {
				want := (tc.instance%tc.n + k) % tc.n
				got := route(int64(k))
				if got != want {
					t.Fatalf("call %d: channel %d, want %d", k, got, want)
				}
				counts[got]++
			}
			for c, cnt := range counts {
				if cnt != 4 {
					t.Fatalf("channel %d chosen %d times in 4 rounds, want 4", c, cnt)
				}
			}
		})
	}
}

func TestRouterRebalanceProducersIndependent(t *testing.T) {
	// Each producer has its own position: calls on one must not move the other.
	a := router(t, testEdge(Rebalance, 2, 3), 0, 3, 128)
	b := router(t, testEdge(Rebalance, 2, 3), 1, 3, 128)
	got := []int{a(nil), a(nil), b(nil), a(nil), b(nil), b(nil)}
	want := []int{0, 1, 1, 2, 2, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("channels %v, want %v", got, want)
	}
}

func TestRouterShuffleInRangeDeterministicAndEven(t *testing.T) {
	const draws = 60000
	for _, n := range []int{1, 2, 3, 7, 16} {
		for _, instance := range []int{0, 1, 5} {
			t.Run(fmt.Sprintf("n=%d/instance=%d", n, instance), func(t *testing.T) {
				edge := testEdge(Shuffle, instance+1, n)
				r1 := router(t, edge, instance, n, 128)
				r2 := router(t, edge, instance, n, 128)
				counts := make([]int, n)
				for k := 0; k < draws; k++ {
					c := r1(int64(k))
					if c < 0 || c >= n {
						t.Fatalf("draw %d: channel %d outside [0,%d)", k, c, n)
					}
					if c2 := r2(int64(k)); c2 != c {
						t.Fatalf("draw %d: two routers for the same (edge, instance) disagree: %d vs %d", k, c, c2)
					}
					counts[c]++
				}
				// Chi-square against the uniform distribution. The sequence is fixed, so
				// this cannot flake; the bound (p ≈ 1e-6 for 15 degrees of freedom) only
				// catches a broken generator, e.g. one that favours low channels.
				exp := float64(draws) / float64(n)
				chi := 0.0
				for _, cnt := range counts {
					d := float64(cnt) - exp
					chi += d * d / exp
				}
				if chi > 50 {
					t.Fatalf("counts %v: chi-square %.1f > 50, not uniform", counts, chi)
				}
				for c, cnt := range counts {
					if float64(cnt) < 0.95*exp || float64(cnt) > 1.05*exp {
						t.Fatalf("channel %d got %d of %d draws, want %.0f ± 5%%", c, cnt, draws, exp)
					}
				}
			})
		}
	}
}

func TestRouterShuffleDiffersByProducerAndEdge(t *testing.T) {
	seq := func(edgeID, instance int) string {
		e := testEdge(Shuffle, 4, 8)
		e.ID = edgeID
		r := router(t, e, instance, 8, 128)
		var b strings.Builder
		for k := 0; k < 32; k++ {
			fmt.Fprintf(&b, "%d,", r(nil))
		}
		return b.String()
	}
	if seq(3, 0) == seq(3, 1) {
		t.Fatal("producers 0 and 1 of one edge draw the same channel sequence")
	}
	if seq(3, 0) == seq(4, 0) {
		t.Fatal("producer 0 of two edges draws the same channel sequence")
	}
}

func TestRouterBroadcast(t *testing.T) {
	for _, n := range []int{1, 3} {
		route := router(t, testEdge(Broadcast, 2, n), 1, n, 128)
		for k := 0; k < 5; k++ {
			if got := route(int64(k)); got != -1 {
				t.Fatalf("n=%d: broadcast routed to %d, want -1", n, got)
			}
		}
	}
}

func TestRouterKeyGroupHashFollowsContiguousTable(t *testing.T) {
	tests := []struct{ max, n int }{
		{128, 1}, {128, 2}, {128, 3}, {128, 5}, {128, 7}, {128, 128},
		{100, 3}, {10, 4}, {7, 7}, {1, 1}, {32768, 9},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("max=%d/n=%d", tc.max, tc.n), func(t *testing.T) {
			table, err := keygroups.Contiguous(tc.max, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			for _, instance := range []int{0, tc.n - 1} {
				route := router(t, testEdge(KeyGroupHash, tc.n, tc.n), instance, tc.n, tc.max)
				hit := make([]int, tc.n)
				for k := 0; k < 5000; k++ {
					key := fmt.Sprintf("key-%d", k)
					want := table.Owner(keygroups.KeyGroup(key, tc.max))
					if got := route(key); got != want {
						t.Fatalf("producer %d: key %q (group %d) routed to %d, want owner %d",
							instance, key, keygroups.KeyGroup(key, tc.max), got, want)
					}
					hit[want]++
				}
				if tc.n <= 16 {
					for c, h := range hit {
						if h == 0 {
							t.Fatalf("instance %d received none of 5000 keys: %v", c, hit)
						}
					}
				}
			}
		})
	}
}

func TestWriterKeyGroupHashBadParallelismNamesEdge(t *testing.T) {
	// More instances than key groups.
	_, err := newTestWriter(testEdge(KeyGroupHash, 1, 9), 0, 9, 8, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "up→down") {
		t.Fatalf("error %v, want one naming the edge", err)
	}
}

func TestWriterUnknownPartitionerIsAnError(t *testing.T) {
	_, err := newTestWriter(testEdge(Partitioner(42), 1, 1), 0, 1, 128, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "unknown partitioner") {
		t.Fatalf("error %v, want an unknown partitioner error", err)
	}
}

func TestWriterHashWithoutKeyFunctionIsAnError(t *testing.T) {
	_, err := NewWriter[int](WriterConfig{Edge: withFirstTable(testEdge(KeyGroupHash, 1, 2), 128), Channels: 2, MaxParallelism: 128, BatchSize: 4}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "without a key function") {
		t.Fatalf("error %v, want a missing key function error", err)
	}
}

// TestWriterSealsFullBatchesAndTakesTheRest checks batching: every full batch
// is sealed at once, in order per channel, broadcast copies a record to every
// channel, and Take returns what is left and empties it.
func TestWriterSealsFullBatchesAndTakesTheRest(t *testing.T) {
	var sealed [3][][]any
	w, err := newTestWriter(testEdge(Broadcast, 1, 3), 0, 3, 128, 4, func(c int, b Batch) {
		sealed[c] = append(sealed[c], b.(Records[any]))
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		w.Write(i)
	}
	for c := range 3 {
		if got := fmt.Sprint(sealed[c]); got != "[[0 1 2 3] [4 5 6 7]]" {
			t.Fatalf("channel %d sealed %s", c, got)
		}
		rest := w.Take(c)
		if rest == nil || rest.Len() != 2 || rest.At(0) != 8 || rest.At(1) != 9 {
			t.Fatalf("channel %d: Take returned %v, want [8 9]", c, rest)
		}
		if again := w.Take(c); again != nil {
			t.Fatalf("channel %d: second Take returned %v, want nil", c, again)
		}
	}
}

func BenchmarkRouterKeyGroupHash(b *testing.B) {
	route := router(b, testEdge(KeyGroupHash, 2, 2), 0, 2, 128)
	keys := make([]any, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%06d", i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		route(keys[i%len(keys)])
	}
}

// TestWriterRefillsRecycledBatches: a batch handed back to the edge's pool is
// the next one a writer fills, emptied first; a pool never keeps more than its
// bound, nor batches of another type.
func TestWriterRefillsRecycledBatches(t *testing.T) {
	pool := NewPool[int]()
	var sealed []Records[int]
	w, err := NewWriter(WriterConfig{Edge: testEdge(Forward, 1, 1), Channels: 1, MaxParallelism: 128, BatchSize: 2,
		Seal: func(_ int, b Batch) { sealed = append(sealed, b.(Records[int])) }}, nil, pool)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(1)
	w.Write(2) // seals [1 2]; the writer takes a fresh batch from the empty pool
	first := sealed[0]
	pool.Recycle(first)
	w.Write(3)
	w.Write(4) // seals [3 4]; the writer now takes the recycled batch
	w.Write(5)
	if len(sealed) != 2 || fmt.Sprint(sealed[1]) != "[3 4]" {
		t.Fatalf("sealed %v, want a second batch [3 4]", sealed)
	}
	rest := w.Take(0).(Records[int])
	if &rest[0] != &first[0] || fmt.Sprint(rest) != "[5]" {
		t.Fatalf("Take returned %v, not the recycled batch refilled with [5]", rest)
	}
	pool.Recycle(Records[string]{"x"})
	for i := 0; i < 2*poolBatches; i++ {
		pool.Recycle(make(Records[int], 0, 2))
	}
	if n := len(pool.free); n != poolBatches {
		t.Fatalf("pool holds %d batches, bound %d", n, poolBatches)
	}
	var nilPool *Pool[int]
	nilPool.Recycle(Records[int]{1})
	if b := nilPool.get(3); cap(b) != 3 {
		t.Fatalf("nil pool gave a batch of cap %d, want 3", cap(b))
	}
}

// TestWriterHashBatchesCarryKeyGroups: on a hash edge every sealed or taken
// batch is Grouped, each record sits in its key group owner's batch, and its
// group is the key's key group; recycling returns both slices to the pool.
func TestWriterHashBatchesCarryKeyGroups(t *testing.T) {
	const max, n = 128, 3
	pool := NewPool[any]()
	var batches []Batch
	var channels []int
	w, err := NewWriter(WriterConfig{Edge: withFirstTable(testEdge(KeyGroupHash, 1, n), max), Channels: n, MaxParallelism: max, BatchSize: 8,
		Seal: func(c int, b Batch) { batches, channels = append(batches, b), append(channels, c) }},
		func(rec any) uint32 { return keygroups.HashKey(rec.(string)) }, pool)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 100; k++ {
		w.Write(fmt.Sprintf("key-%d", k))
	}
	for c := range n {
		if b := w.Take(c); b != nil {
			batches, channels = append(batches, b), append(channels, c)
		}
	}
	table, _ := keygroups.Contiguous(max, n)
	seen := 0
	for i, b := range batches {
		g, ok := b.(Grouped[any])
		if !ok || len(g.Groups) != len(g.Recs) {
			t.Fatalf("batch %d is %T with %d groups, want Grouped with one group per record", i, b, len(g.Groups))
		}
		for j, rec := range g.Recs {
			want := keygroups.KeyGroup(rec.(string), max)
			if int(g.Groups[j]) != want || table.Owner(want) != channels[i] {
				t.Fatalf("%v: group %d on channel %d, want group %d owned by %d", rec, g.Groups[j], channels[i], want, table.Owner(want))
			}
			seen++
		}
		pool.Recycle(b)
	}
	if seen != 100 {
		t.Fatalf("%d records in the batches, want 100", seen)
	}
	if len(pool.free) == 0 || len(pool.groups) == 0 {
		t.Fatalf("recycling Grouped batches left %d record and %d group slices in the pool", len(pool.free), len(pool.groups))
	}
}
