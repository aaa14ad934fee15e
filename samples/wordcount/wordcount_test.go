package wordcount

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// plainCount counts the words of lines 0..n-1 without weir.
func plainCount(seed, n int64) (map[string]int64, int64) {
	text := NewText(seed)
	m := map[string]int64{}
	total := int64(0)
	for i := int64(0); i < n; i++ {
		for _, w := range strings.Fields(text.Line(i)) {
			m[w]++
			total++
		}
	}
	return m, total
}

func TestVocabularyDistinct(t *testing.T) {
	seen := map[string]int{}
	for k, w := range Vocabulary() {
		if j, dup := seen[w]; dup {
			t.Fatalf("word %d and %d are both %q", j, k, w)
		}
		seen[w] = k
	}
	if len(seen) != VocabularySize {
		t.Fatalf("%d words, want %d", len(seen), VocabularySize)
	}
}

func TestTextDeterministicAndSkewed(t *testing.T) {
	a, b := NewText(7), NewText(7)
	for i := int64(0); i < 100; i++ {
		if a.Line(i) != b.Line(i) {
			t.Fatalf("line %d differs between two generators of one seed", i)
		}
	}
	if NewText(7).Line(3) == NewText(8).Line(3) && NewText(7).Line(4) == NewText(8).Line(4) {
		t.Fatal("seeds 7 and 8 give the same text")
	}
	m, total := plainCount(1, 5000)
	top := TopN(m, 2)
	voc := Vocabulary()
	if top[0].Word != voc[0] || top[1].Word != voc[1] {
		t.Fatalf("top words %v, want %s then %s (rank order)", top, voc[0], voc[1])
	}
	if share := float64(top[0].Count) / float64(total); share < 0.1 || share > 0.2 {
		t.Fatalf("most frequent word has share %.3f, want about 1/H(500) ≈ 0.147", share)
	}
}

func TestWordcountMatchesPlainCount(t *testing.T) {
	const n = 3000
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			const seed = 42
			want, total := plainCount(seed, n)
			tally := NewTally()
			g, err := Build(Config{Records: n, Parallelism: p, Seed: seed, Tally: tally})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if res.RecordsIn != n || res.RecordsOut != total {
				t.Fatalf("records in/out %d/%d, want %d/%d", res.RecordsIn, res.RecordsOut, n, total)
			}
			got := tally.Counts()
			if len(got) != len(want) {
				t.Fatalf("%d distinct words, want %d", len(got), len(want))
			}
			for w, c := range want {
				if got[w] != c {
					t.Fatalf("word %q counted %d, want %d", w, got[w], c)
				}
			}
			if top, wtop := tally.Top(10), TopN(want, 10); fmt.Sprint(top) != fmt.Sprint(wtop) {
				t.Fatalf("top 10 %v, want %v", top, wtop)
			}
		})
	}
}

func TestWordcountFileOutput(t *testing.T) {
	const n, seed = 2000, 3
	want, total := plainCount(seed, n)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	g, err := Build(Config{Records: n, Parallelism: 2, Seed: seed, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	last := map[string]int64{}
	lines := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var wc WordCount
		if err := json.Unmarshal(sc.Bytes(), &wc); err != nil {
			t.Fatalf("line %d: %v: %q", lines+1, err, sc.Text())
		}
		lines++
		if wc.Count != last[wc.Word]+1 {
			t.Fatalf("line %d: word %q count %d after %d", lines, wc.Word, wc.Count, last[wc.Word])
		}
		last[wc.Word] = wc.Count
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != total {
		t.Fatalf("%d lines, want %d", lines, total)
	}
	for w, c := range want {
		if last[w] != c {
			t.Fatalf("word %q ends at %d, want %d", w, last[w], c)
		}
	}
}

func TestBuildRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Records: -2, Parallelism: 1}, {Records: 10, Parallelism: 0}} {
		if _, err := Build(cfg); err == nil {
			t.Errorf("Build(%+v) succeeded, want an error", cfg)
		}
	}
}
