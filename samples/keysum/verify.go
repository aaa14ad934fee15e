package keysum

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Verify checks keysum output for exactly-once, in-order results: every one
// of the k keys has counts 1, 2, …, n/k, each once and in order, each with
// the sum of the weights of the key's records so far, and n lines in all.
// It names the first line that is wrong.
func Verify(r io.Reader, n int64, k int) error {
	if k < 1 || n%int64(k) != 0 {
		return fmt.Errorf("verify: records %d must be a multiple of keys %d", n, k)
	}
	type progress struct{ count, sum int64 }
	next := map[string]progress{}
	index := map[string]int64{}
	for i := 0; i < k; i++ {
		index[fmt.Sprintf("k%06d", i)] = int64(i)
	}
	lines := int64(0)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var s Sum
		lines++
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return fmt.Errorf("line %d: %v: %q", lines, err, sc.Text())
		}
		x, ok := index[s.Key]
		if !ok {
			return fmt.Errorf("line %d: unknown key %q", lines, s.Key)
		}
		p := next[s.Key]
		if want := p.count + 1; s.Count != want {
			what := "missing"
			if s.Count < want {
				what = "repeated"
			}
			return fmt.Errorf("line %d: key %s count %d, want %d (%s output)", lines, s.Key, s.Count, want, what)
		}
		p.count++
		p.sum += Weight(x + (p.count-1)*int64(k))
		if s.Sum != p.sum {
			return fmt.Errorf("line %d: key %s count %d has sum %d, want %d (out of order or wrong records)", lines, s.Key, s.Count, s.Sum, p.sum)
		}
		next[s.Key] = p
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read output: %w", err)
	}
	if lines != n {
		return fmt.Errorf("%d lines, want %d", lines, n)
	}
	if len(next) != k && n > 0 {
		return fmt.Errorf("%d keys, want %d", len(next), k)
	}
	return nil
}
