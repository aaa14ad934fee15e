package keycount

import (
	"fmt"
	"testing"
)

// BenchmarkHandwritten runs keycount's work as plain Go pipelines (no weir) to the
// discarding sink; compare its records/s with BenchmarkKeycount.
func BenchmarkHandwritten(b *testing.B) {
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("p=%d", p), func(b *testing.B) {
			const n, k = 10_000_000, 1000
			var total float64
			for i := 0; i < b.N; i++ {
				res, err := RunHandwritten(n, k, p)
				if err != nil {
					b.Fatal(err)
				}
				if res.RecordsOut != n {
					b.Fatalf("records out %d, want %d", res.RecordsOut, n)
				}
				total += res.RecordsPerSecond()
			}
			b.ReportMetric(total/float64(b.N), "records/s")
		})
	}
}

func TestHandwrittenCountsEveryRecordOnce(t *testing.T) {
	tests := []struct {
		n    int64
		k, p int
	}{
		{0, 10, 1}, {1, 1, 1}, {100_000, 1000, 1}, {100_000, 1000, 2}, {99_990, 30, 3}, {200_000, 7, 5},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("n=%d/k=%d/p=%d", tc.n, tc.k, tc.p), func(t *testing.T) {
			res, err := RunHandwritten(tc.n, tc.k, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if res.RecordsIn != tc.n || res.RecordsOut != tc.n {
				t.Fatalf("records in/out %d/%d, want %d", res.RecordsIn, res.RecordsOut, tc.n)
			}
			// Key j gets the records i ≡ j (mod k): m_j of them, counted 1..m_j.
			want, keys := int64(0), 0
			for j := 0; j < tc.k; j++ {
				m := tc.n / int64(tc.k)
				if int64(j) < tc.n%int64(tc.k) {
					m++
				}
				if m > 0 {
					keys++
				}
				want += m * (m + 1) / 2
			}
			if res.CountSum != want {
				t.Errorf("sum of counts %d, want %d", res.CountSum, want)
			}
			if res.Keys != keys {
				t.Errorf("counters saw %d keys, want %d", res.Keys, keys)
			}
		})
	}
}

func TestHandwrittenRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		k, p int
	}{{-1, 1, 1}, {1, 0, 1}, {1, 1, 0}, {1, 1, 129}} {
		if _, err := RunHandwritten(tc.n, tc.k, tc.p); err == nil {
			t.Errorf("RunHandwritten(%d, %d, %d) accepted a bad config", tc.n, tc.k, tc.p)
		}
	}
}
