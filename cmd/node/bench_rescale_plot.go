package main

import (
	"fmt"

	"github.com/weirstream/weir/plot"
)

// rescalePlot draws both cases' throughput at the sinks in 100 ms buckets
// over the run, the rescales marked (both cases ask for them at the same
// times).
func rescalePlot(cfg rescaleBenchConfig, res *rescaleBenchResult) plot.LineChart {
	c := plot.LineChart{Title: "Rescale while running: live vs stop-and-restore",
		XLabel: "seconds since the start", YLabel: "records/s at the sinks (100 ms buckets)"}
	for _, cs := range res.Cases {
		s := plot.Series{Name: cs.Case}
		for i, r := range cs.RecordsPerS {
			s.X = append(s.X, (float64(i)+0.5)*rescaleBucket.Seconds())
			s.Y = append(s.Y, r)
		}
		if len(s.X) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	c.Markers = []plot.Marker{
		{X: cfg.firstRescale().Seconds(), Label: fmt.Sprintf("count %d→%d", cfg.From, cfg.To)},
		{X: cfg.secondRescale().Seconds(), Label: fmt.Sprintf("count %d→%d", cfg.To, cfg.From)},
	}
	return c
}
