package cli

import (
	"fmt"
	"maps"
	"testing"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/samples/wordcount"
)

// TestForwardChains: keycount's count[i] and sink[i] (a forward edge) form a
// group per instance; the hash-fed sources are in none. wordcount has two
// chains.
func TestForwardChains(t *testing.T) {
	g, err := keycount.Build(keycount.Config{Records: 10, Keys: 2, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := map[cluster.TaskRef]string{
		{Operator: "count", Instance: 0}: "count#0", {Operator: "sink", Instance: 0}: "count#0",
		{Operator: "count", Instance: 1}: "count#1", {Operator: "sink", Instance: 1}: "count#1",
	}
	if got := forwardChains(p); !maps.Equal(got, want) {
		t.Fatalf("keycount chains %v, want %v", got, want)
	}
	wg, err := wordcount.Build(wordcount.Config{Records: 10, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	wp, err := wg.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// source →forward→ split →hash→ count →forward→ sink: two chains.
	wantWC := map[cluster.TaskRef]string{}
	for i := range 2 {
		for op, grp := range map[string]string{"source": "source", "split": "source", "count": "count", "sink": "count"} {
			wantWC[cluster.TaskRef{Operator: op, Instance: i}] = fmt.Sprintf("%s#%d", grp, i)
		}
	}
	if got := forwardChains(wp); !maps.Equal(got, wantWC) {
		t.Fatalf("wordcount chains %v, want %v", got, wantWC)
	}
}
