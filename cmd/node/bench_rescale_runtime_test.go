package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weirstream/weir/rescale/flow"
)

// TestRuntimeFromSourceLine: a live rescale's line puts the runtime's
// latency from the source beside the bench's own; a step without the
// runtime's figures (stop-and-restore) has none.
func TestRuntimeFromSourceLine(t *testing.T) {
	res := &rescaleBenchResult{Cases: []rescaleCaseResult{
		{Case: caseLive, Steps: []rescaleStepResult{{From: 2, To: 3,
			Runtime: &flow.Flow{FromSourceBeforeUnmoved: flow.Latency{Records: 9, P50Ms: 0.128, P99Ms: 4.096},
				FromSourceUnmoved: flow.Latency{Records: 3, P50Ms: 65.536, P99Ms: 131.072}},
			Before: keyLatency{Unmoved: latencyFigure{Records: 5, P50Ms: 1.5, P99Ms: 7}}}}},
		{Case: caseRestore, Steps: []rescaleStepResult{{From: 2, To: 3}}},
	}}
	var out bytes.Buffer
	writeRuntimeFromSource(&out, res)
	want := "  live 2→3, p50/p99 ms: runtime from source to count: unmoved 0.1/4.1 before, 65.5/131.1 during; moved - before, - during. " +
		"bench from due time to sink: unmoved 1.5/7.0 before, - during; moved - before, - during\n"
	if out.String() != want {
		t.Fatalf("printed\n%q\nwant\n%q", out.String(), want)
	}
	if strings.Contains(out.String(), caseRestore) {
		t.Fatal("a stop-and-restore step got a runtime line")
	}
}
