package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// canonicalOutput is a job's committed output with the order between keys
// taken out: each key's lines in the order written. Lines of different keys
// interleave differently with the parallelism and the timing; a key's own
// sequence must not change.
type canonicalOutput struct {
	Lines int
	Keys  map[string][]string
}

// canonicalise reads JSON lines that each have a "key" field.
func canonicalise(r io.Reader) (canonicalOutput, error) {
	c := canonicalOutput{Keys: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		c.Lines++
		var rec struct {
			Key *string `json:"key"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Key == nil {
			return c, fmt.Errorf("output line %d is not a JSON object with a key: %q", c.Lines, sc.Text())
		}
		c.Keys[*rec.Key] = append(c.Keys[*rec.Key], string(bytes.Clone(sc.Bytes())))
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("read output: %w", err)
	}
	return c, nil
}

// diff describes the first difference of got from want, or "" when they are
// the same.
func (want canonicalOutput) diff(got canonicalOutput) string {
	keys := map[string]bool{}
	for k := range want.Keys {
		keys[k] = true
	}
	for k := range got.Keys {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var first string
	differ := 0
	for _, k := range sorted {
		w, g := want.Keys[k], got.Keys[k]
		d := diffSequence(w, g)
		if d == "" {
			continue
		}
		differ++
		if first == "" {
			first = fmt.Sprintf("key %q: %s", k, d)
		}
	}
	if first == "" {
		return ""
	}
	return fmt.Sprintf("%d lines, want %d; %d of %d keys differ; first: %s", got.Lines, want.Lines, differ, len(sorted), first)
}

// diffSequence describes where one key's lines differ.
func diffSequence(want, got []string) string {
	for i := 0; i < len(want) && i < len(got); i++ {
		if want[i] != got[i] {
			return fmt.Sprintf("line %d of the key is %s, want %s", i+1, got[i], want[i])
		}
	}
	switch {
	case len(got) < len(want):
		return fmt.Sprintf("%d lines, want %d: the key's tail from %s is missing", len(got), len(want), want[len(got)])
	case len(got) > len(want):
		return fmt.Sprintf("%d lines, want %d: %s and after are extra", len(got), len(want), got[len(want)])
	}
	return ""
}
