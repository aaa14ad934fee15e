package keygroups

import (
	"errors"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		max, p int
		ok     bool
	}{
		{1, 1, true},
		{128, 1, true},
		{128, 128, true},
		{32768, 32768, true},
		{32768, 7, true},
		{0, 1, false},
		{-1, 1, false},
		{32769, 1, false},
		{128, 0, false},
		{128, -3, false},
		{128, 129, false},
	}
	for _, c := range cases {
		err := Validate(c.max, c.p)
		if c.ok && err != nil {
			t.Errorf("Validate(%d, %d) = %v, want nil", c.max, c.p, err)
		}
		if !c.ok && !errors.Is(err, ErrInvalidParallelism) {
			t.Errorf("Validate(%d, %d) = %v, want ErrInvalidParallelism", c.max, c.p, err)
		}
	}
}

func TestRangeFlinkExamples(t *testing.T) {
	cases := []struct {
		max, p, i int
		want      Range
	}{
		{128, 1, 0, Range{0, 127}},
		{128, 4, 0, Range{0, 31}},
		{128, 4, 3, Range{96, 127}},
		{128, 3, 0, Range{0, 42}},
		{128, 3, 1, Range{43, 85}},
		{128, 3, 2, Range{86, 127}},
		{128, 5, 0, Range{0, 25}},
		{128, 5, 1, Range{26, 51}},
		{128, 5, 2, Range{52, 76}},
		{128, 5, 3, Range{77, 102}},
		{128, 5, 4, Range{103, 127}},
		{100, 7, 6, Range{86, 99}},
		{128, 128, 77, Range{77, 77}},
	}
	for _, c := range cases {
		if got := RangeFor(c.max, c.p, c.i); got != c.want {
			t.Errorf("RangeFor(%d, %d, %d) = %v, want %v", c.max, c.p, c.i, got, c.want)
		}
	}
}

func TestRangeMethods(t *testing.T) {
	r := Range{3, 5}
	if r.Len() != 3 || !r.Contains(3) || !r.Contains(5) || r.Contains(2) || r.Contains(6) {
		t.Errorf("Range{3,5}: Len %d, Contains wrong", r.Len())
	}
	if (Range{4, 3}).Len() != 0 {
		t.Error("empty range has non-zero Len")
	}
	if r.String() != "[3-5]" {
		t.Errorf("String() = %q", r.String())
	}
}

// parallelismsFor returns several parallelisms to try for max.
func parallelismsFor(max int) []int {
	ps := []int{1, 2, 3, 4, 5, 7, 10, 64, 100, 127, 1000, max - 1, max}
	var out []int
	seen := map[int]bool{}
	for _, p := range ps {
		if p >= 1 && p <= max && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

var maxValues = []int{1, 2, 3, 5, 100, 127, 128, 129, 1000, 4096, 32768}

func TestRangesPartitionKeyGroups(t *testing.T) {
	for _, max := range maxValues {
		for _, p := range parallelismsFor(max) {
			tab, err := Contiguous(max, p)
			if err != nil {
				t.Fatalf("Contiguous(%d, %d): %v", max, p, err)
			}
			if err := tab.Validate(); err != nil {
				t.Fatalf("Contiguous(%d, %d).Validate: %v", max, p, err)
			}
			next := 0
			lo, hi := max, 0
			for i := 0; i < p; i++ {
				r := RangeFor(max, p, i)
				if r.Start != next {
					t.Fatalf("max %d p %d: instance %d starts at %d, want %d (gap or overlap)", max, p, i, r.Start, next)
				}
				if r.Len() < 1 {
					t.Fatalf("max %d p %d: instance %d has empty range %v", max, p, i, r)
				}
				lo, hi = min(lo, r.Len()), maxInt(hi, r.Len())
				for g := r.Start; g <= r.End; g++ {
					if o := OwnerOf(g, max, p); o != i {
						t.Fatalf("max %d p %d: OwnerOf(%d) = %d, RangeFor says %d", max, p, g, o, i)
					}
					if o := tab.Owner(g); o != i {
						t.Fatalf("max %d p %d: table owner of %d = %d, want %d", max, p, g, o, i)
					}
				}
				next = r.End + 1
			}
			if next != max {
				t.Fatalf("max %d p %d: ranges end at %d, want %d", max, p, next-1, max-1)
			}
			if hi-lo > 1 {
				t.Fatalf("max %d p %d: range sizes from %d to %d, differ by more than 1", max, p, lo, hi)
			}
		}
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
