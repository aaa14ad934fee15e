package backpressure

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/graphplan"
)

func TestBackpressureRunsToTheEnd(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		p       int
		sleepMs float64
	}{{1, 0}, {2, 0}, {2, 0.01}} {
		t.Run(fmt.Sprintf("p=%d,sleep=%v", tc.p, tc.sleepMs), func(t *testing.T) {
			var measured atomic.Int64
			g, err := Build(Config{Records: n, Parallelism: tc.p, SleepMs: tc.sleepMs, Measured: &measured})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if res.RecordsIn != n || res.RecordsOut != n {
				t.Fatalf("records in/out %d/%d, want %d", res.RecordsIn, res.RecordsOut, n)
			}
			if got := measured.Load(); got != n {
				t.Fatalf("measure stage saw %d records, want %d", got, n)
			}
			if res.LatencyCount != n {
				t.Fatalf("latency count %d, want %d", res.LatencyCount, n)
			}
			if res.LatencyP50 <= 0 || res.LatencyP99 < res.LatencyP50 {
				t.Fatalf("latency p50 %v p99 %v: want 0 < p50 ≤ p99", res.LatencyP50, res.LatencyP99)
			}
		})
	}
}

func TestBackpressureEveryEdgeShuffles(t *testing.T) {
	g, err := Build(Config{Records: 1, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := graphplan.Of(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Edges) != 5 {
		t.Fatalf("%d edges, want 5 (source→map-1→map-2→sleepy-map→measure→sink)", len(p.Edges))
	}
	for _, e := range p.Edges {
		if e.Partitioner.String() != "shuffle" {
			t.Errorf("edge %s → %s is %s, want shuffle", e.From.Name, e.To.Name, e.Partitioner)
		}
	}
	for name, par := range g.Parallelisms() {
		if par != 2 {
			t.Errorf("operator %s has parallelism %d, want 2", name, par)
		}
	}
}

func TestBuildRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Records: -5, Parallelism: 1}, {Records: 1, Parallelism: 0}, {Records: 1, Parallelism: 1, SleepMs: -1}} {
		if _, err := Build(cfg); err == nil {
			t.Errorf("Build(%+v) succeeded, want an error", cfg)
		}
	}
}

// BenchmarkBackpressure runs the topology without sleep; reports records/s.
func BenchmarkBackpressure(b *testing.B) {
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("p=%d", p), func(b *testing.B) {
			const n = 2_000_000
			var total float64
			for i := 0; i < b.N; i++ {
				g, err := Build(Config{Records: n, Parallelism: p})
				if err != nil {
					b.Fatal(err)
				}
				res, err := weir.Run(context.Background(), g)
				if err != nil {
					b.Fatal(err)
				}
				total += res.RecordsPerSecond()
			}
			b.ReportMetric(total/float64(b.N), "records/s")
		})
	}
}
