package main

import (
	"path/filepath"
	"testing"
)

// TestClusterRestoreAtNewParallelism: a keycount job on three `node start`
// processes at parallelism 3 is cancelled part way, then `node submit
// --restore latest --parallelism 5` restores it with count at 5 instances
// (its key groups rebalanced) and the source at 5 (its 3 splits dealt to 5
// instances, two of them idle) over the
// nodes: every node's part must use the same rescaled plan, and the output
// is exactly one uninterrupted run.
func TestClusterRestoreAtNewParallelism(t *testing.T) {
	t.Parallel()
	const n, k = 300000, 100 // 6 s of sleep in count: cancelled after two checkpoints, long before its end
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	args := append(pacedKeycountArgs(out, n, k, 0.06), "--coordinator", "n2", "--checkpoint-mode", "unaligned")
	cancelPartWay(t, c, args, out, n)
	_, sout2, done2 := c.submitAttached(append(args, "--restore", "latest", "--parallelism", "5")...)
	if err := waitSubmit(t, done2, sout2); err != nil {
		t.Fatalf("node submit --restore latest --parallelism 5: %v\n%s", err, sout2.String())
	}
	verifyKeycount(t, out, n, k)
}
