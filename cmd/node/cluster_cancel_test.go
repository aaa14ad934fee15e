package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterCancelThenRestoreExactlyOnce: `node cancel` stops a cluster job
// part way (with a stop checkpoint), the attached submit reports it
// cancelled, the committed output is a consistent prefix, and `node submit
// --restore latest` finishes the job: the output is exactly one
// uninterrupted run.
func TestClusterCancelThenRestoreExactlyOnce(t *testing.T) {
	t.Parallel()
	const n, k = 300000, 100 // 6 s of sleep in count: cancelled after two checkpoints, long before its end
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	args := append(pacedKeycountArgs(out, n, k, 0.06), "--coordinator", "n2")
	cancelPartWay(t, c, args, out, n)
	_, sout2, done2 := c.submitAttached(append(args, "--restore", "latest")...)
	if err := waitSubmit(t, done2, sout2); err != nil {
		t.Fatalf("node submit --restore latest: %v\n%s", err, sout2.String())
	}
	verifyKeycount(t, out, n, k)
}

// cancelPartWay submits keycount with args, cancels it after two
// checkpoints and checks that the attached submit says so and that out is a
// consistent prefix of the n lines.
func cancelPartWay(t *testing.T, c *testCluster, args []string, out string, n int64) {
	t.Helper()
	_, sout, done := c.submitAttached(args...)
	c.waitCheckpoint("keycount", 2, "")
	if code, stdout, stderr := c.client("cancel", "keycount"); code != 0 {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := waitSubmit(t, done, sout); err == nil {
		t.Fatalf("node submit of a cancelled job exited 0:\n%s", sout.String())
	}
	if !strings.Contains(sout.String(), "cancel") {
		t.Fatalf("node submit does not say the job was cancelled:\n%s", sout.String())
	}
	lines, err := verifyPrefix(out)
	if err != nil {
		t.Fatalf("output after the cancel: %v", err)
	}
	if lines >= n {
		t.Fatalf("the cancelled job committed all %d lines: the cancel came after the end", lines)
	}
}

// verifyPrefix checks that a keycount output file is a prefix of one run:
// each key's counts go 1, 2, … once and in order. It returns the lines.
func verifyPrefix(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	next := map[string]int64{}
	lines := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines++
		var r struct {
			Key   string `json:"key"`
			Count int64  `json:"count"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return lines, fmt.Errorf("line %d: %w", lines, err)
		}
		if r.Count != next[r.Key]+1 {
			return lines, fmt.Errorf("line %d: key %s count %d, want %d", lines, r.Key, r.Count, next[r.Key]+1)
		}
		next[r.Key] = r.Count
	}
	return lines, sc.Err()
}
