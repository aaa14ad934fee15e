package plot

import (
	"fmt"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 100, 5, "[0 50 100]"},
		{0, 97, 6, "[0 20 40 60 80 100]"},
		{0, 1, 5, "[0 0.5 1]"},
		{0, 0.3, 4, "[0 0.1 0.2 0.3]"},
		{3, 3, 5, "[0 1 2 3]"},
		{0, 0, 5, "[0 0.5 1]"},
		{-7, 12, 5, "[-10 -5 0 5 10 15]"},
		{0, 123456, 5, "[0 50000 100000 150000]"},
		{100, 0, 5, "[0 50 100]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(niceTicks(c.lo, c.hi, c.n)); got != c.want {
			t.Errorf("niceTicks(%v, %v, %d) = %s, want %s", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

func TestLabel(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.5: "0.5", 2500: "2500", 50000: "50k", 1.5e6: "1.5M", -20000: "-20k"} {
		if got := label(v); got != want {
			t.Errorf("label(%v) = %q, want %q", v, got, want)
		}
	}
}
