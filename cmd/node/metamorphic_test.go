package main

import (
	"strings"
	"testing"
)

// TestMetaCells checks the grid: every combination once, mode none only
// without disturbance (the others skipped with the reason), and names that
// parse back.
func TestMetaCells(t *testing.T) {
	cells := allMetaCells(metaJobs)
	if want := len(metaJobs) * len(metaModes) * len(metaParallelisms) * len(metaDisturbances); len(cells) != want {
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	skipped := 0
	seen := map[string]bool{}
	for _, c := range cells {
		if seen[c.String()] {
			t.Fatalf("cell %s twice", c)
		}
		seen[c.String()] = true
		back, err := parseMetaCell(c.String())
		if err != nil || back != c {
			t.Fatalf("cell %s parses back as %v, %v", c, back, err)
		}
		if c.skip() != "" {
			skipped++
			if c.Mode != "none" || c.Chaos == "no-chaos" {
				t.Fatalf("cell %s skipped: %s", c, c.skip())
			}
		}
	}
	if want := len(metaJobs) * len(metaParallelisms) * (len(metaDisturbances) - 1); skipped != want {
		t.Fatalf("%d cells skipped, want %d", skipped, want)
	}
	for _, bad := range []string{"", "keycount/none/p3/no-chaos", "wordcount/none/p1/no-chaos", "keycount/aligned/p1"} {
		if _, err := parseMetaCell(bad); err == nil {
			t.Errorf("cell %q parsed", bad)
		}
	}
	if cellSeed(1, cells[0]) == cellSeed(2, cells[0]) || cellSeed(1, cells[0]) == cellSeed(1, cells[1]) {
		t.Error("cell seeds do not depend on the seed and the cell")
	}
}

// TestCanonicalOutputDiff checks that the comparison ignores the order
// between keys and names a key's first difference.
func TestCanonicalOutputDiff(t *testing.T) {
	parse := func(s string) canonicalOutput {
		t.Helper()
		c, err := canonicalise(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ref := parse(`{"key":"a","count":1}
{"key":"b","count":1}
{"key":"a","count":2}
`)
	cases := []struct {
		name, out, want string
	}{
		{"keys interleaved otherwise", `{"key":"b","count":1}
{"key":"a","count":1}
{"key":"a","count":2}
`, ""},
		{"a key's order changed", `{"key":"a","count":2}
{"key":"b","count":1}
{"key":"a","count":1}
`, `key "a": line 1 of the key is {"key":"a","count":2}`},
		{"tail lost", `{"key":"a","count":1}
{"key":"b","count":1}
`, `key "a": 1 lines, want 2: the key's tail from {"key":"a","count":2} is missing`},
		{"repeated", `{"key":"a","count":1}
{"key":"b","count":1}
{"key":"a","count":2}
{"key":"b","count":1}
`, `4 lines, want 3; 1 of 2 keys differ; first: key "b": 2 lines, want 1`},
		{"key missing", `{"key":"a","count":1}
{"key":"a","count":2}
`, `key "b": 0 lines, want 1`},
	}
	for _, c := range cases {
		got := ref.diff(parse(c.out))
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: diff %q, want one containing %q", c.name, got, c.want)
		}
	}
	if _, err := canonicalise(strings.NewReader("{\"count\":1}\n")); err == nil {
		t.Error("a line without a key was accepted")
	}
}

// metaTestSeed draws the short check's cells; its sample holds the
// aligned, aligned-with-timeout and unaligned modes, both incremental ones
// (with actor kills and both process kills among them) and every
// parallelism (the test checks the modes and parallelisms).
const metaTestSeed = 106
