package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/samples/backpressure"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// TestRestoreAtNewParallelismExactlyOnce SIGKILLs `node run keycount` at
// parallelism 2 under backpressure with checkpoints every 50 ms and restores
// it with --restore latest --parallelism M: the committed output of both runs
// together is exactly one run's, and the restored run's manifests carry the
// checkpoint's table rescaled to M (epoch 1), not M's contiguous ranges. In
// unaligned mode the captured channel state is split by key group to the new
// instances and replayed before new input. The source goes to M too, by
// splits: the restored run logs it, and its manifest deals the first run's
// two splits, each read to its end (checkSourceRescaled). A subset of M per
// mode keeps the test short; the full grid is measured by hand. 200,000
// records, as TestRestoreRescalesSourceBySplits: the kill lands in the
// first part of the job (the test logs the committed lines at the kill).
func TestRestoreAtNewParallelismExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 500
	cells := []struct {
		mode string
		m    int
	}{{"aligned", 1}, {"aligned", 5}, {"unaligned", 3}, {"unaligned", 8}}
	for _, c := range cells {
		t.Run(fmt.Sprintf("%s/M=%d", c.mode, c.m), func(t *testing.T) {
			t.Parallel()
			stateDir, stderr := killAndRestoreKeycount(t, bin, c.mode, n, k, "--parallelism", fmt.Sprint(c.m))
			checkRescaledManifest(t, stateDir, c.m)
			checkSourceRescaled(t, stateDir, stderr, c.m, n)
			want := fmt.Sprintf(`"operator":"count","from":2,"to":%d`, c.m)
			if !strings.Contains(stderr, want) || !strings.Contains(stderr, `"key_groups_min"`) {
				t.Fatalf("restored run did not log the rescale of count (%s):\n%s", want, stderr)
			}
		})
	}
}

// killAndRestoreKeycount SIGKILLs `node run keycount --parallelism 2` (n
// records, k keys, checkpoints every 50 ms in mode) after 3 checkpoints and
// restores it from the latest with the restore flags: the committed output
// must be exactly one run's, and the restored run log no error. It returns
// the state directory and the restored run's log.
func killAndRestoreKeycount(t *testing.T, bin, mode string, n, k int, restore ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	args := []string{"run", "keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k),
		"--out", out, "--state-dir", stateDir, "--sleep-ms", "0.02",
		"--checkpoint-mode", mode, "--checkpoint-interval", "50ms", "--log-level", "info"}
	killAfterCheckpoints(t, bin, append(args, "--parallelism", "2"), stateDir, 3)
	logCommittedAtKill(t, out, n)
	code, stderr := runNode(t, bin, append(append(args, restore...), "--restore", "latest")...)
	if code != 0 || strings.Contains(stderr, `"level":"error"`) {
		t.Fatalf("restored run (%v) exited %d:\n%s", restore, code, stderr)
	}
	if err := keycount.VerifyFile(out, int64(n), k); err != nil {
		t.Fatalf("output after kill and restore with %v: %v", restore, err)
	}
	return stateDir, stderr
}

// logCommittedAtKill logs how many of the job's n output lines were
// committed when its first run was killed: how far into the job the kill
// landed.
func logCommittedAtKill(t *testing.T, out string, n int) {
	t.Helper()
	data, _ := os.ReadFile(out)
	lines := bytes.Count(data, []byte("\n"))
	t.Logf("killed with %d of %d lines committed (%.0f%%)", lines, n, 100*float64(lines)/float64(n))
}

// latestManifest is job's newest manifest in the local store at stateDir.
func latestManifest(t *testing.T, stateDir, job string) *store.Manifest {
	t.Helper()
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	man, err := st.Latest(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	return man
}

// checkRescaledManifest checks that the newest manifest ran count at
// parallelism m with the first table for 2 instances rescaled to m, and the
// source at m.
func checkRescaledManifest(t *testing.T, stateDir string, m int) {
	t.Helper()
	man := latestManifest(t, stateDir, "keycount")
	first, err := keygroups.Contiguous(man.MaxParallelism, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := first.Rescale(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := keygroups.FromOwners(man.MaxParallelism, man.Parallelism["count"], man.KeyGroupEpochs["count"], man.KeyGroups["count"])
	if err != nil {
		t.Fatalf("manifest %d: %v", man.CheckpointID, err)
	}
	if !got.Equal(want) || got.Epoch != 1 {
		t.Fatalf("manifest %d: count's table %v epoch %d, want the rescaled %v epoch 1", man.CheckpointID, got.Owners, got.Epoch, want.Owners)
	}
	if contiguous, _ := keygroups.Contiguous(man.MaxParallelism, m); m > 1 && got.Equal(contiguous) {
		t.Fatalf("manifest %d: count's table is %d's contiguous ranges, not the rescaled one", man.CheckpointID, m)
	}
	if p := man.Parallelism["source"]; p != m {
		t.Fatalf("manifest %d: source at parallelism %d, want %d (a generated source rescales by splits)", man.CheckpointID, p, m)
	}
}

// TestRestoreBackpressureAtNewParallelismExactlyOnce: the backpressure job
// (every edge a non-keyed shuffle, a file sink) SIGKILLed at parallelism 2
// and restored unaligned at 3 writes every record exactly once, through all
// three map stages.
func TestRestoreBackpressureAtNewParallelismExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n = 200000
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	args := []string{"run", "backpressure", "--records", fmt.Sprint(n), "--out", out, "--state-dir", stateDir,
		"--sleep-ms", "0.02", "--checkpoint-mode", "unaligned", "--checkpoint-interval", "50ms", "--log-level", "warn"}
	killAfterJobCheckpoints(t, bin, append(args, "--parallelism", "2"), stateDir, "backpressure", 3)
	logCommittedAtKill(t, out, n)

	second := exec.Command(bin, append(args, "--parallelism", "3", "--restore", "latest")...)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	if err := second.Run(); err != nil {
		t.Fatalf("restored run: %v\n%s", err, stderr.String())
	}
	if err := backpressure.VerifyFile(out, n); err != nil {
		t.Fatalf("output after kill and restore at 3: %v", err)
	}
	if strings.Contains(stderr.String(), `"level":"error"`) {
		t.Fatalf("restored run logged errors:\n%s", stderr.String())
	}
}
