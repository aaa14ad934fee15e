package keycount

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Verify checks keycount output for exactly-once, in-order results: every one
// of the k keys has counts 1, 2, …, n/k, each once and in order, with n lines
// in all. It names the first line that is wrong.
func Verify(r io.Reader, n int64, k int) error {
	next := map[string]int64{}
	lines := int64(0)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var c Count
		lines++
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return fmt.Errorf("line %d: %v: %q", lines, err, sc.Text())
		}
		if want := next[c.Key] + 1; c.Count != want {
			what := "missing"
			if c.Count < want {
				what = "repeated"
			}
			return fmt.Errorf("line %d: key %s count %d, want %d (%s output)", lines, c.Key, c.Count, want, what)
		}
		next[c.Key] = c.Count
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read output: %w", err)
	}
	if lines != n {
		return fmt.Errorf("%d lines, want %d", lines, n)
	}
	if len(next) != k {
		return fmt.Errorf("%d keys, want %d", len(next), k)
	}
	for key, c := range next {
		if c != n/int64(k) {
			return fmt.Errorf("key %s ends at %d, want %d", key, c, n/int64(k))
		}
	}
	return nil
}

// VerifyFile runs Verify on the output file at path.
func VerifyFile(path string, n int64, k int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("keycount output: %w", err)
	}
	defer f.Close()
	return Verify(f, n, k)
}
