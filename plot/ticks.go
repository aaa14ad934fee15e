// Package plot draws line and bar charts as SVG in Go: axes with ticks,
// labels and a legend, no external tools. Benchmarks write their figures
// with it (`node bench ... --plot FILE`).
package plot

import (
	"math"
	"strconv"
)

// niceTicks returns about n evenly spaced round tick values covering
// [lo, hi]: steps of 1, 2 or 5 times a power of ten. lo == hi widens the
// range to include 0 (or 1 above it) so there is an axis to draw.
func niceTicks(lo, hi float64, n int) []float64 {
	if n < 2 {
		n = 2
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if hi == 0 {
			hi = 1
		} else if hi > 0 {
			lo = 0
		} else {
			hi = 0
		}
	}
	raw := (hi - lo) / float64(n-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	first := math.Floor(lo/step) * step
	var ticks []float64
	for v := first; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, roundTo(v, step))
	}
	if ticks[len(ticks)-1] < hi {
		ticks = append(ticks, roundTo(ticks[len(ticks)-1]+step, step))
	}
	return ticks
}

// roundTo removes floating-point noise from v, a multiple of step.
func roundTo(v, step float64) float64 {
	digits := max(0, -int(math.Floor(math.Log10(step))))
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// label formats a tick value: short, no trailing zeros, k/M suffixes.
func label(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
