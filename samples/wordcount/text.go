package wordcount

import (
	"math"
	"sort"
	"strings"
)

// VocabularySize is the number of distinct words the text generator uses.
const VocabularySize = 500

// maxWordsPerLine bounds a generated line's length (lines have 1..max words).
const maxWordsPerLine = 12

// syllables are the 70 consonant-vowel pairs words are made of.
var syllables = func() []string {
	var s []string
	for _, c := range "bdfgklmnprstvz" {
		for _, v := range "aeiou" {
			s = append(s, string(c)+string(v))
		}
	}
	return s
}()

// Vocabulary returns the generator's words, most frequent first. Word k is two
// syllables (k mod 70, (k/70 + 3k) mod 70), which are distinct for k < 490, and
// a third syllable is added from k = 490 on.
func Vocabulary() []string {
	n := len(syllables)
	words := make([]string, VocabularySize)
	for k := range words {
		w := syllables[k%n] + syllables[(k/n+3*k)%n]
		if k >= 7*n {
			w += syllables[k%n]
		}
		words[k] = w
	}
	return words
}

// Text deterministically generates lines of words with a Zipf-like (1/rank)
// word distribution: line i depends only on the seed and i, so a generator
// source can replay any line.
type Text struct {
	seed  uint64
	words []string
	cdf   []float64 // cumulative word probabilities
}

// NewText returns the generator for a seed.
func NewText(seed int64) *Text {
	words := Vocabulary()
	cdf := make([]float64, len(words))
	sum := 0.0
	for r := range words {
		sum += 1 / float64(r+1)
		cdf[r] = sum
	}
	for r := range cdf {
		cdf[r] /= sum
	}
	cdf[len(cdf)-1] = math.Inf(1) // rounding never runs past the last word
	return &Text{seed: uint64(seed), words: words, cdf: cdf}
}

// Line returns line i of the text.
func (t *Text) Line(i int64) string {
	r := rng{state: mix64(t.seed ^ mix64(uint64(i)))}
	n := 1 + int(r.next()%maxWordsPerLine)
	var b strings.Builder
	for w := 0; w < n; w++ {
		if w > 0 {
			b.WriteByte(' ')
		}
		u := float64(r.next()>>11) / (1 << 53) // uniform in [0, 1)
		b.WriteString(t.words[sort.SearchFloat64s(t.cdf, u)])
	}
	return b.String()
}

// rng is splitmix64: tiny, fast and good enough for test data.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix64(r.state)
}

// mix64 is splitmix64's finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
