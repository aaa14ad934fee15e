package bigstate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Verify checks bigstate output for exactly-once, in-order results with
// the right state: every one of the k keys has counts 1, 2, …, n/k, each
// once and in order, each with the checksum its value must have after that
// many updates of valueBytes bytes, and n lines in all. It names the first
// line that is wrong.
func Verify(r io.Reader, n int64, k, valueBytes int) error {
	type key struct {
		count int64
		value []byte
	}
	keys := map[string]*key{}
	lines := int64(0)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var d Digest
		lines++
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("line %d: %v: %q", lines, err, sc.Text())
		}
		if d.Key == "" {
			return fmt.Errorf("line %d: no key: %q", lines, sc.Text())
		}
		s := keys[d.Key]
		if s == nil {
			s = &key{value: InitialValue(d.Key, valueBytes)}
			keys[d.Key] = s
		}
		if want := s.count + 1; d.Count != want {
			what := "missing"
			if d.Count < want {
				what = "repeated"
			}
			return fmt.Errorf("line %d: key %s count %d, want %d (%s output)", lines, d.Key, d.Count, want, what)
		}
		s.count = d.Count
		Update(s.value, s.count)
		if want := Checksum(s.value); d.CRC != want {
			return fmt.Errorf("line %d: key %s count %d: value crc32c %08x, want %08x (state lost or damaged)", lines, d.Key, d.Count, d.CRC, want)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read output: %w", err)
	}
	if lines != n {
		return fmt.Errorf("%d lines, want %d", lines, n)
	}
	if len(keys) != k {
		return fmt.Errorf("%d keys, want %d", len(keys), k)
	}
	for name, s := range keys {
		if s.count != n/int64(k) {
			return fmt.Errorf("key %s ends at %d, want %d", name, s.count, n/int64(k))
		}
	}
	return nil
}

// VerifyFile runs Verify on the output file at path.
func VerifyFile(path string, n int64, k, valueBytes int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bigstate output: %w", err)
	}
	defer f.Close()
	return Verify(f, n, k, valueBytes)
}
