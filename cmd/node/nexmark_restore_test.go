package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/nexmark"
)

// TestNexmarkKillAndRestoreExactlyOnce SIGKILLs `node run nexmark` for q5
// (sliding windows, then a keyed top per window) and q3 (a join whose state
// expires by event-time timers) after three unaligned checkpoints, and
// restores it with --restore latest: the committed output of both runs
// together is exactly an undisturbed run's. The slow stage (0.1 ms per
// event, about 3 s per instance) keeps the first run going well past its
// third checkpoint on a loaded machine: at 0.03 ms it once ended on its own
// before the kill.
func TestNexmarkKillAndRestoreExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const events, rate, seed = 60000, 1000, 5
	for _, query := range []string{"q5", "q3"} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
			args := []string{"run", "nexmark", "--query", query, "--events", fmt.Sprint(events), "--rate", fmt.Sprint(rate),
				"--seed", fmt.Sprint(seed), "--parallelism", "2", "--out", out, "--state-dir", stateDir, "--sleep-ms", "0.1",
				"--checkpoint-mode", "unaligned", "--checkpoint-interval", "50ms", "--log-level", "warn"}
			killAfterJobCheckpoints(t, bin, args, stateDir, "nexmark-"+query, 3)
			second := exec.Command(bin, append(args, "--restore", "latest")...)
			var stderr bytes.Buffer
			second.Stderr = &stderr
			if err := second.Run(); err != nil {
				t.Fatalf("restored run: %v\n%s", err, stderr.String())
			}
			if strings.Contains(stderr.String(), `"level":"error"`) {
				t.Fatalf("restored run logged errors:\n%s", stderr.String())
			}
			got, want := sortedLines(t, out), undisturbedNexmark(t, query, events, rate, seed)
			if len(want) == 0 {
				t.Fatal("the undisturbed run has no results: the input is too small")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s after kill and restore: %d results, want the undisturbed run's %d (first difference at %d)",
					query, len(got), len(want), firstDifference(got, want))
			}
		})
	}
}

// undisturbedNexmark runs query in this process without checkpoints and
// returns its sorted output lines.
func undisturbedNexmark(t *testing.T, query string, events int64, rate int, seed int64) []string {
	t.Helper()
	gen := nexmark.DefaultConfig(seed)
	gen.Rate = rate
	out := filepath.Join(t.TempDir(), "undisturbed.jsonl")
	g, err := nexmark.Build(nexmark.JobConfig{Query: query, Events: events, Generator: gen, Parallelism: 2, Out: nexmark.Output{File: out}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := weir.Run(ctx, g); err != nil {
		t.Fatal(err)
	}
	return sortedLines(t, out)
}

// sortedLines is the lines of the file at path, sorted.
func sortedLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	slices.Sort(lines)
	return lines
}

// firstDifference is the first index where a and b differ.
func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
