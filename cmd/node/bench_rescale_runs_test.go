package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/weirstream/weir/cli"
)

// TestRescaleRunsJudgeByTheMedianRun: one run's outlier, good or bad, does
// not decide a target; an even number of runs is judged by the worse of the
// two middle ones; a missed run is worse than any met one.
func TestRescaleRunsJudgeByTheMedianRun(t *testing.T) {
	ratio := func(v float64) []rescaleTarget {
		live := rescaleCaseResult{DisruptionMs: 100 / v, Steps: []rescaleStepResult{{Moved: 1, Minimum: 1}}}
		return rescaleTargets(live, rescaleCaseResult{DisruptionMs: 100})
	}
	zeros := func(n int) []rescaleTarget {
		live := rescaleCaseResult{DisruptionMs: 1, Steps: []rescaleStepResult{{ZeroBuckets: n, Moved: 1, Minimum: 1}}}
		return rescaleTargets(live, rescaleCaseResult{DisruptionMs: 100})
	}
	for _, c := range []struct {
		name    string
		runs    [][]rescaleTarget
		target  int
		value   float64
		met     bool
		metRuns int
	}{
		{"one bad run of three", [][]rescaleTarget{ratio(14.6), ratio(1.85), ratio(29.25)}, 3, 14.6, true, 2},
		{"one good run of three", [][]rescaleTarget{ratio(9.75), ratio(54.81), ratio(9.74)}, 3, 9.75, false, 1},
		{"even: the worse middle", [][]rescaleTarget{ratio(12), ratio(8), ratio(30), ratio(11)}, 3, 11, true, 3},
		{"even: the worse middle missed", [][]rescaleTarget{ratio(12), ratio(8), ratio(30), ratio(9)}, 3, 9, false, 2},
		{"at most: the higher is worse", [][]rescaleTarget{zeros(0), zeros(2), zeros(1)}, 0, 1, false, 1},
		{"at most: mostly met", [][]rescaleTarget{zeros(0), zeros(3), zeros(0)}, 0, 0, true, 2},
	} {
		got := medianTargets(c.runs)[c.target]
		if math.Abs(got.Value-c.value) > 1e-9 || got.Met != c.met || got.MetRuns != c.metRuns || got.Runs != len(c.runs) {
			t.Errorf("%s: value %.2f met %v (in %d of %d runs), want %.2f met %v (in %d of %d)",
				c.name, got.Value, got.Met, got.MetRuns, got.Runs, c.value, c.met, c.metRuns, len(c.runs))
		}
	}
}

// TestRescaleRunsPrintEveryRunAndTheVerdict: the runs' values of each
// target stand next to the median's verdict.
func TestRescaleRunsPrintEveryRunAndTheVerdict(t *testing.T) {
	cfg := rescaleBenchConfig{Keys: 10, Rate: 10, From: 2, To: 3, Mode: "unaligned"}
	var runs []*rescaleBenchResult
	var per [][]rescaleTarget
	for _, v := range []float64{14.6, 1.85, 29.25} {
		live := rescaleCaseResult{Case: caseLive, DisruptionMs: 100 / v}
		res := &rescaleBenchResult{Cases: []rescaleCaseResult{live, {Case: caseRestore, DisruptionMs: 100}}, Targets: rescaleTargets(live, rescaleCaseResult{DisruptionMs: 100})}
		runs = append(runs, res)
		per = append(per, res.Targets)
	}
	var out bytes.Buffer
	writeRescaleRuns(&out, cfg, runs, medianTargets(per))
	want := "met    disruption of stop-and-restore / live (from each rescale's start): median 14.60 (limit 10); runs 14.60, 1.85, 29.25; met in 2 of 3"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output has no line %q:\n%s", want, out.String())
	}
	if n := strings.Count(out.String(), "run "); n < 3 {
		t.Errorf("output names %d runs, want each of 3:\n%s", n, out.String())
	}
}

func TestBenchRescaleRefusesBadRuns(t *testing.T) {
	for _, runs := range []string{"0", "-1", "101"} {
		var stderr bytes.Buffer
		if code := runRescaleBench(context.Background(), []string{"--runs", runs}, &bytes.Buffer{}, &stderr); code != cli.ExitUsage {
			t.Errorf("--runs %s: exit %d, want %d (usage)", runs, code, cli.ExitUsage)
		}
		if !strings.Contains(stderr.String(), "--runs") {
			t.Errorf("--runs %s: no message naming it: %q", runs, stderr.String())
		}
	}
}
