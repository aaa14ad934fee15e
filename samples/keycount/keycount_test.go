package keycount

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirstream/weir"
)

// verifyCounts checks that every key's counts are exactly 1..n/k in order, each
// once, with n lines in all.
func verifyCounts(t *testing.T, path string, n int64, k int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	next := map[string]int64{}
	lines := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c Count
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %d: %v: %q", lines+1, err, sc.Text())
		}
		lines++
		if want := next[c.Key] + 1; c.Count != want {
			t.Fatalf("line %d: key %s count %d, want %d", lines, c.Key, c.Count, want)
		}
		next[c.Key] = c.Count
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != n {
		t.Fatalf("%d lines, want %d", lines, n)
	}
	if len(next) != k {
		t.Fatalf("%d keys, want %d", len(next), k)
	}
	for key, c := range next {
		if c != n/int64(k) {
			t.Fatalf("key %s ends at %d, want %d", key, c, n/int64(k))
		}
	}
}

func TestKeycountExactlyOnceInOrder(t *testing.T) {
	const n, k = 20000, 100
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			g, err := Build(Config{Records: n, Keys: k, Parallelism: p, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if res.RecordsIn != n || res.RecordsOut != n {
				t.Fatalf("records in/out = %d/%d, want %d", res.RecordsIn, res.RecordsOut, n)
			}
			verifyCounts(t, out, n, k)
		})
	}
}
