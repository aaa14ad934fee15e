// Package logcheck checks JSON log lines for what weir's logs must never
// hold: a key twice in one object, or a duration without its unit.
package logcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// DuplicateKeys returns the keys that appear more than once in one object
// of the JSON value line (at any depth), in order of their second
// appearance; an error when line is not JSON.
func DuplicateKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var dups []string
	if err := walk(dec, &dups); err != nil {
		return nil, err
	}
	return dups, nil
}

// walk reads one JSON value from dec, collecting duplicate object keys.
func walk(dec *json.Decoder, dups *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if seen[key] {
				*dups = append(*dups, key)
			}
			seen[key] = true
			if err := walk(dec, dups); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := walk(dec, dups); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// DurationKeys are the log keys weir uses for durations: their values must
// be Go duration strings ("1.5s"); a duration in a number carries its unit
// in its key instead (took_ms, duration_s).
var DurationKeys = []string{"took", "duration", "elapsed", "alignment", "recovery", "waited", "stalled_for",
	"retry_in", "settle", "timeout", "placement_timeout"}

// Problems lists every line of r (JSON log lines; other lines are skipped)
// with a duplicate key or a duration key whose value is not a Go duration
// string.
func Problems(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		dups, err := DuplicateKeys(line)
		if err != nil {
			out = append(out, fmt.Sprintf("not JSON (%v): %s", err, line))
			continue
		}
		if len(dups) > 0 {
			out = append(out, fmt.Sprintf("duplicate keys %s: %s", strings.Join(dups, ","), line))
		}
		var fields map[string]any
		if json.Unmarshal(line, &fields) != nil {
			continue
		}
		for _, k := range DurationKeys {
			v, ok := fields[k]
			if !ok {
				continue
			}
			s, isStr := v.(string)
			if _, err := time.ParseDuration(s); !isStr || err != nil {
				out = append(out, fmt.Sprintf("duration %q without a unit (%v): %s", k, v, line))
			}
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return out, err
	}
	return out, nil
}
