//go:build long

package main

import (
	"context"
	"fmt"
	"testing"
)

// TestMetamorphicShort runs one seeded cell per job and disturbance (actor
// kills, SIGKILL of `node run` then --restore latest or an older retained
// checkpoint, none) with `node run` processes and demands that each
// commits the same output as its job's undisturbed run without checkpoints
// at parallelism 1. A differing cell prints its seed and the replay command.
func TestMetamorphicShort(t *testing.T) {
	t.Parallel()
	cfg := defaultMeta()
	cfg.Seed, cfg.Records, cfg.Exe = metaTestSeed, 60000, buildNode(t)
	// One key count for all cells, so that each job has one reference run;
	// many keys, so that the incremental cells write deltas.
	cfg.Keys, cfg.IncrKeys = 30000, 30000
	cells := sampleMetaCells(cfg.Seed, metaJobs)
	covered := map[string]bool{}
	for _, c := range cells {
		covered[c.Mode], covered[fmt.Sprint(c.P)] = true, true
	}
	for _, want := range []string{"aligned", "aligned-1ms", "unaligned", "aligned-incr", "unaligned-incr-c2", "1", "2", "4"} {
		if !covered[want] {
			t.Fatalf("seed %d's cells %v lack %s", cfg.Seed, cells, want)
		}
	}
	results := runMetaCells(context.Background(), cfg, cells, func(r metaResult) {
		if r.Skipped == "" && !r.Same {
			t.Errorf("%s", r.line(cfg))
			return
		}
		t.Log(r.line(cfg))
	})
	t.Log(metaSummary(cfg, results))
	if len(results) != len(cells) {
		t.Fatalf("%d of %d cells ran", len(results), len(cells))
	}
}
