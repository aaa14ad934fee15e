package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterRestoreAtNewParallelism: a keycount job on three `node start`
// processes at parallelism 3 is cancelled part way, then `node submit
// --restore latest --parallelism 5` restores it with count at 5 instances
// (its key groups rebalanced, the source at its checkpoint's 3) over the
// nodes: every node's part must use the same rescaled plan, and the output
// is exactly one uninterrupted run.
func TestClusterRestoreAtNewParallelism(t *testing.T) {
	const n, k = 1200000, 100
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	args := append(keycountArgs(out, n, k), "--coordinator", "n2", "--checkpoint-mode", "unaligned")
	_, sout, done := c.submitAttached(args...)
	c.waitStatus("two checkpoints", func(s statusView) bool { id, _ := jobCheckpoints(s, "keycount"); return id >= 2 })
	if code, stdout, stderr := c.client("cancel", "keycount"); code != 0 {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := waitSubmit(t, done, sout); err == nil || !strings.Contains(sout.String(), "cancel") {
		t.Fatalf("node submit of a cancelled job: %v\n%s", err, sout.String())
	}
	lines, err := verifyPrefix(out)
	if err != nil {
		t.Fatalf("output after the cancel: %v", err)
	}
	if lines >= n {
		t.Fatalf("the cancelled job committed all %d lines: the cancel came after the end", lines)
	}
	_, sout2, done2 := c.submitAttached(append(args, "--restore", "latest", "--parallelism", "5")...)
	if err := waitSubmit(t, done2, sout2); err != nil {
		t.Fatalf("node submit --restore latest --parallelism 5: %v\n%s", err, sout2.String())
	}
	verifyKeycount(t, out, n, k)
}
