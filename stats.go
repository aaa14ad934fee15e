package weir

import (
	"math"
	"slices"
)

// Quantile returns the nearest-rank q-quantile (0 < q ≤ 1) of values, or 0 for
// none. The input is not modified.
func Quantile(values []float64, q float64) float64 {
	if len(values) == 0 {
		return 0
	}
	v := slices.Clone(values)
	slices.Sort(v)
	rank := int(math.Ceil(q * float64(len(v))))
	rank = min(max(rank, 1), len(v))
	return v[rank-1]
}
