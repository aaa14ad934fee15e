package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Several runs of `node bench rescale` (--runs): a run's ratio of
// disruptions rests on a few tens of milliseconds of the live case, which
// one descheduling of the process on a busy machine can double, so the
// verdict of several runs is their median's.

// rescaleRunsResult is what `node bench rescale --runs N` prints for N > 1.
type rescaleRunsResult struct {
	Runs []*rescaleBenchResult `json:"runs"`
	// Targets are the median run's, per target (medianTargets).
	Targets []rescaleTarget `json:"targets"`
}

// benchRescaleRuns runs the benchmark n times, each a live case and a
// stop-and-restore case in turn, so both see the same load.
func benchRescaleRuns(ctx context.Context, cfg rescaleBenchConfig, n int, progress io.Writer) ([]*rescaleBenchResult, error) {
	var runs []*rescaleBenchResult
	for i := range n {
		if n > 1 {
			fmt.Fprintf(progress, "run %d of %d\n", i+1, n)
		}
		res, err := benchRescale(ctx, cfg, progress)
		if err != nil {
			return nil, fmt.Errorf("run %d of %d: %w", i+1, n, err)
		}
		runs = append(runs, res)
	}
	return runs, nil
}

// medianTargets is, per target, the median of the runs' verdicts: the runs
// ordered from best to worst (a missed target is worse than any met one,
// then by how far its value is from the limit's side), the middle one's
// value and verdict; of an even number, the worse of the two middle ones.
// MetRuns counts the runs that met the target.
func medianTargets(runs [][]rescaleTarget) []rescaleTarget {
	if len(runs) == 0 {
		return nil
	}
	out := make([]rescaleTarget, len(runs[0]))
	for k := range runs[0] {
		var all []rescaleTarget
		met := 0
		for _, r := range runs {
			all = append(all, r[k])
			if r[k].Met {
				met++
			}
		}
		slices.SortStableFunc(all, func(a, b rescaleTarget) int {
			if a.Met != b.Met {
				if a.Met {
					return -1
				}
				return 1
			}
			av, bv := a.Value, b.Value
			if a.atLeastLimit {
				av, bv = -av, -bv
			}
			switch {
			case av < bv:
				return -1
			case av > bv:
				return 1
			}
			return 0
		})
		m := all[len(all)/2]
		m.MetRuns, m.Runs = met, len(runs)
		out[k] = m
	}
	return out
}

// writeRescaleRuns prints each run's table, then the runs' values of each
// target and the median's verdict.
func writeRescaleRuns(w io.Writer, cfg rescaleBenchConfig, runs []*rescaleBenchResult, targets []rescaleTarget) {
	for i, res := range runs {
		fmt.Fprintf(w, "run %d of %d:\n", i+1, len(runs))
		writeRescaleTable(w, cfg, res)
	}
	fmt.Fprintf(w, "targets over %d runs (each run's value; the verdict is the median run's):\n", len(runs))
	for k, t := range targets {
		var values []string
		for _, res := range runs {
			values = append(values, fmt.Sprintf("%.2f", res.Targets[k].Value))
		}
		verdict := "missed"
		if t.Met {
			verdict = "met"
		}
		value := fmt.Sprintf("%.2f", t.Value)
		if t.AtLeast {
			value = "≥ " + value
		}
		fmt.Fprintf(w, "  %-6s %s: median %s (limit %g); runs %s; met in %d of %d\n", verdict, t.Target, value, t.Limit, strings.Join(values, ", "), t.MetRuns, t.Runs)
	}
}
