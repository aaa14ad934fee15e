package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// TestRestoreRescalesSourceBySplits SIGKILLs `node run keycount
// --parallelism 2` after 3 checkpoints and restores it with the source at
// another parallelism by --operator-parallelism source=1, aligned and
// unaligned: the committed output is exactly one run's, and the restored
// run's last manifest runs the source at the new parallelism with the first
// run's two splits, each read to its end, dealt split s to instance s mod M.
// TestRestoreAtNewParallelismExactlyOnce checks the same of a restore by
// --parallelism M (at 3, 5 and 8 instances 2 and up serve none).
func TestRestoreRescalesSourceBySplits(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 500
	cells := []struct {
		mode string
		flag []string
		m    int
	}{
		{"aligned", []string{"--parallelism", "2", "--operator-parallelism", "source=1"}, 1},
		{"unaligned", []string{"--parallelism", "2", "--operator-parallelism", "source=1"}, 1},
	}
	for _, c := range cells {
		t.Run(fmt.Sprintf("%s/%s", c.mode, strings.Join(c.flag, " ")), func(t *testing.T) {
			t.Parallel()
			stateDir, stderr := killAndRestoreKeycount(t, bin, c.mode, n, k, c.flag...)
			checkSourceRescaled(t, stateDir, stderr, c.m, n)
		})
	}
}

// TestRestoreSourceAfterRestore: keycount killed at 2, restored with the
// source (and every operator) at 3 and killed again, then restored at 1:
// exactly once, and the last manifest has the one source instance serving
// both splits of the first run.
func TestRestoreSourceAfterRestore(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 500
	p := func(m int) []string { return []string{"--parallelism", fmt.Sprint(m)} }
	c := restoreChain{job: "keycount", mode: "unaligned", n: n, keys: k, steps: [][]string{p(2), p(3), p(1)},
		verify: func(out string) error { return keycount.VerifyFile(out, int64(n), k) }}
	checkSourceSplits(t, c.run(t, bin), 1, n)
}

// checkSourceRescaled checks that the restored run logged the source's
// rescale from 2 to m and that its last manifest deals the first run's two
// splits (checkSourceSplits).
func checkSourceRescaled(t *testing.T, stateDir, stderr string, m, n int) {
	t.Helper()
	want := fmt.Sprintf(`"operator":"source","from":2,"to":%d`, m)
	if !strings.Contains(stderr, want) {
		t.Fatalf("restored run did not log the source's rescale (%s):\n%s", want, stderr)
	}
	checkSourceSplits(t, stateDir, m, n)
}

// checkSourceSplits checks that keycount's newest manifest in stateDir runs
// the source at m with the first run's splits 0 and 1 of 2 dealt s → s mod m,
// read to the end of the n records (n/2 each), and each task's source
// offset the sum of its splits'.
func checkSourceSplits(t *testing.T, stateDir string, m, n int) {
	t.Helper()
	man := latestManifest(t, stateDir, "keycount")
	if p := man.Parallelism["source"]; p != m {
		t.Fatalf("manifest %d: source at parallelism %d, want %d", man.CheckpointID, p, m)
	}
	got := make([][]store.SourceSplit, m)
	for _, ts := range man.Tasks {
		if ts.Operator != "source" {
			continue
		}
		var sum int64
		for _, s := range ts.Splits {
			sum += s.Offset
		}
		if sum != ts.SourceOffset {
			t.Fatalf("manifest %d: source[%d] at offset %d, its splits %v sum to %d", man.CheckpointID, ts.Instance, ts.SourceOffset, ts.Splits, sum)
		}
		got[ts.Instance] = ts.Splits
	}
	want := make([][]store.SourceSplit, m)
	for s := range 2 {
		want[s%m] = append(want[s%m], store.SourceSplit{ID: s, Of: 2, Offset: int64(n / 2)})
	}
	for i := range m {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("manifest %d: source splits %v, want %v", man.CheckpointID, got, want)
		}
	}
}

// TestRestoreSourceOverForwardEdge: keysum's source feeds weigh over a
// forward edge; killed at 2 and restored aligned with --parallelism 4, the
// source and weigh move to 4 together (before splits the source kept 2 and
// the forward edge refused the restore), and the output is exactly once.
func TestRestoreSourceOverForwardEdge(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 500
	c := restoreChain{job: "keysum", mode: "aligned", n: n, keys: k,
		steps: [][]string{{"--parallelism", "2"}, {"--parallelism", "4"}}, verify: verifyKeysum(n, k)}
	man := latestManifest(t, c.run(t, bin), "keysum")
	if got := fmt.Sprint(man.Parallelism["source"], man.Parallelism["weigh"]); got != "4 4" {
		t.Fatalf("manifest %d: source and weigh at %s, want 4 4", man.CheckpointID, got)
	}
}
