package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/samples/keycount"
)

// TestRunLiveRescaleSchedule runs `node run keycount --rescale` with count
// going 2 → 3 → 1 → 4 while the job runs behind a slow stage: the output is
// every key's counts 1..n/k, once each and in order, and each rescale logs
// its commit with the groups it moved against the minimum.
func TestRunLiveRescaleSchedule(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200_000, 100
	out := filepath.Join(t.TempDir(), "out.jsonl")
	code, stderr := runNode(t, bin, "run", "keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k),
		"--sleep-ms", "0.02", "--checkpoint-mode", "none", "--out", out,
		"--rescale", "100ms:count=3,200ms:count=1,300ms:count=4")
	if code != 0 || strings.Contains(stderr, `"level":"error"`) {
		t.Fatalf("node run exited %d:\n%s", code, stderr)
	}
	if got := strings.Count(stderr, `"message":"rescale committed"`); got != 3 {
		t.Fatalf("%d rescales committed, want 3:\n%s", got, stderr)
	}
	for _, want := range []string{"count 2→3 moves 42 of 128 (min 42)", "count 3→1 moves 85 of 128 (min 85)", "count 1→4 moves 96 of 128 (min 96)"} {
		if !strings.Contains(stderr, `"changes":"`+want+`"`) {
			t.Fatalf("log has no rescale %s:\n%s", want, stderr)
		}
	}
	if err := keycount.VerifyFile(out, n, k); err != nil {
		t.Fatal(err)
	}
}

// TestRunRescaleFlagErrors: a bad schedule and an unknown operator are
// refused before anything runs, saying why; a step the planner refuses
// fails the run with its reason.
func TestRunRescaleFlagErrors(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--rescale", "count=3"}, "the schedule starts with a time"},
		{[]string{"--checkpoint-mode", "none", "--rescale", "2s:cnt=3"}, `--rescale: the job has no operator "cnt"`},
		// A plan the planner refuses fails its step; the job runs on, and
		// the run exits with the step's error.
		{[]string{"--checkpoint-mode", "none", "--records", "100000", "--sleep-ms", "0.01", "--rescale", "50ms:source=3"},
			`--rescale step 1 failed: rescale 1 of job "keycount": source "source" cannot change parallelism live`},
	}
	for _, c := range cases {
		code, stderr := runNode(t, bin, append([]string{"run", "keycount", "--records", "10"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want an error containing %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}
