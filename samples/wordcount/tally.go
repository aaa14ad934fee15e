package wordcount

import (
	"cmp"
	"slices"
	"sync"

	"github.com/weirstream/weir"
)

// Tally is a sink that keeps each word's latest running count instead of
// writing the records anywhere; after the run it knows every word's total.
type Tally struct {
	mu    sync.Mutex
	parts map[int]*tallyPart // by sink instance
}

// tallyPart is one sink instance's counts.
type tallyPart struct {
	mu     sync.Mutex
	counts map[string]int64
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{parts: map[int]*tallyPart{}} }

// Sink returns the sink factory to hand to weir.ToSink.
func (t *Tally) Sink() func(instance int) weir.Sink[WordCount] {
	return func(instance int) weir.Sink[WordCount] {
		t.mu.Lock()
		defer t.mu.Unlock()
		p := t.parts[instance]
		if p == nil { // a restarted instance keeps its part: counts only grow
			p = &tallyPart{counts: map[string]int64{}}
			t.parts[instance] = p
		}
		return &tallySink{part: p}
	}
}

// Counts returns every word's total: the highest running count seen for it.
func (t *Tally) Counts() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int64{}
	for _, p := range t.parts {
		p.mu.Lock()
		for w, c := range p.counts {
			if c > out[w] {
				out[w] = c
			}
		}
		p.mu.Unlock()
	}
	return out
}

// Top returns the n most frequent words, ties broken alphabetically.
func (t *Tally) Top(n int) []WordCount {
	return TopN(t.Counts(), n)
}

// TopN returns the n highest counts of m, ties broken alphabetically.
func TopN(m map[string]int64, n int) []WordCount {
	all := make([]WordCount, 0, len(m))
	for w, c := range m {
		all = append(all, WordCount{Word: w, Count: c})
	}
	slices.SortFunc(all, func(a, b WordCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Word, b.Word)
	})
	if n < len(all) {
		all = all[:n]
	}
	return all
}

// tallySink is one instance of the tally sink.
type tallySink struct{ part *tallyPart }

func (s *tallySink) Open(weir.TaskInfo) error { return nil }
func (s *tallySink) Finish() error            { return nil }
func (s *tallySink) Close() error             { return nil }

// Write records each word's latest count.
func (s *tallySink) Write(batch []WordCount) error {
	s.part.mu.Lock()
	defer s.part.mu.Unlock()
	for _, wc := range batch {
		if wc.Count > s.part.counts[wc.Word] {
			s.part.counts[wc.Word] = wc.Count
		}
	}
	return nil
}
