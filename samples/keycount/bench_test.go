package keycount

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirstream/weir"
)

// BenchmarkKeycount runs keycount to the discarding sink; report records/s.
func BenchmarkKeycount(b *testing.B) {
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("p=%d", p), func(b *testing.B) {
			const n, k = 10_000_000, 1000
			var total float64
			for i := 0; i < b.N; i++ {
				g, err := Build(Config{Records: n, Keys: k, Parallelism: p})
				if err != nil {
					b.Fatal(err)
				}
				res, err := weir.Run(context.Background(), g)
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
