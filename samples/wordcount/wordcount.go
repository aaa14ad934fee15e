// Package wordcount is the word-count sample: a deterministic generated text
// (a 500-word vocabulary with a Zipf-like distribution), lines split into words,
// a keyed running count per word, and one output record per word occurrence:
// {"word":"bada","count":17}.
package wordcount

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir"
)

// Line is one input record: line number N of the text.
type Line struct {
	N    int64  `msgpack:"n" json:"n"`
	Text string `msgpack:"t" json:"text"`
}

// WordCount is one output record: the word's running count after this occurrence.
type WordCount struct {
	Word  string `msgpack:"w" json:"word"`
	Count int64  `msgpack:"c" json:"count"`
}

// Config sizes the job.
type Config struct {
	Records     int64 // lines of text; weir.Unbounded for no end
	Parallelism int   // of every operator except the file sink, which runs once
	Seed        int64 // of the text generator
	// Out is a JSON-lines file for the counts; empty means Tally (or, with no
	// Tally, a discarding sink).
	Out string
	// Tally, when set and Out is empty, receives the counts.
	Tally *Tally
}

// Build makes the wordcount graph.
func Build(cfg Config) (*weir.Graph, error) {
	if cfg.Records < 0 && cfg.Records != weir.Unbounded {
		return nil, fmt.Errorf("wordcount: records %d must be ≥ 0 (or %d for unbounded)", cfg.Records, weir.Unbounded)
	}
	if cfg.Parallelism < 1 {
		return nil, fmt.Errorf("wordcount: parallelism %d must be ≥ 1", cfg.Parallelism)
	}
	text := NewText(cfg.Seed)
	p := weir.Parallelism(cfg.Parallelism)
	g := weir.NewGraph("wordcount")
	lines := weir.Generate(g, "source", cfg.Records, func(i int64) Line {
		return Line{N: i, Text: text.Line(i)}
	}, p)
	words := weir.FlatMap(lines, "split", func(l Line, out *weir.Emitter[string]) error {
		for _, w := range strings.Fields(l.Text) {
			out.Emit(w)
		}
		return nil
	}, p)
	counts := weir.NewValueState[int64](g, "count")
	out := weir.Process(weir.KeyBy(words, func(w string) string { return w }), "count",
		func(ctx *weir.KeyedContext[string], w string, out *weir.Emitter[WordCount]) error {
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(WordCount{Word: w, Count: c})
			return nil
		}, weir.WithState(counts), p)
	switch {
	case cfg.Out != "":
		weir.ToSink(out, "sink", weir.FileSink[WordCount](cfg.Out))
	case cfg.Tally != nil:
		weir.ToSink(out, "sink", cfg.Tally.Sink(), p)
	default:
		weir.ToSink(out, "sink", weir.DiscardSink[WordCount](nil), p)
	}
	return g, nil
}
