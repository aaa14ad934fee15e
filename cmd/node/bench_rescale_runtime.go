package main

import (
	"fmt"
	"io"
)

// writeRuntimeFromSource prints, for each live rescale, the runtime's own
// latency from the source (read by the source to processed by count, the
// rescaled operator; package rescale/flow) next to the bench's (due at the
// source to delivered by the sink), both p50/p99 ms.
func writeRuntimeFromSource(w io.Writer, res *rescaleBenchResult) {
	for _, c := range res.Cases {
		for _, s := range c.Steps {
			f := s.Runtime
			if f == nil {
				continue
			}
			fmt.Fprintf(w, "  %s %d→%d, p50/p99 ms: runtime from source to count: unmoved %s before, %s during; moved %s before, %s during. bench from due time to sink: unmoved %s before, %s during; moved %s before, %s during\n",
				c.Case, s.From, s.To, pqRuntime(f.FromSourceBeforeUnmoved.Records, f.FromSourceBeforeUnmoved.P50Ms, f.FromSourceBeforeUnmoved.P99Ms),
				pqRuntime(f.FromSourceUnmoved.Records, f.FromSourceUnmoved.P50Ms, f.FromSourceUnmoved.P99Ms),
				pqRuntime(f.FromSourceBeforeMoved.Records, f.FromSourceBeforeMoved.P50Ms, f.FromSourceBeforeMoved.P99Ms),
				pqRuntime(f.FromSourceMoved.Records, f.FromSourceMoved.P50Ms, f.FromSourceMoved.P99Ms),
				pq(s.Before.Unmoved), pq(s.During.Unmoved), pq(s.Before.Moved), pq(s.During.Moved))
		}
	}
}

// pqRuntime prints a runtime latency figure as p50/p99 (its quantiles are
// the upper bounds of doubling bins).
func pqRuntime(records int64, p50, p99 float64) string {
	return pq(latencyFigure{Records: int(records), P50Ms: p50, P99Ms: p99})
}
