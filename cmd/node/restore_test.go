package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// checkpointIDs lists the checkpoints of job with a manifest in the state
// dir, ascending.
func checkpointIDs(t *testing.T, stateDir, job string) []uint64 {
	t.Helper()
	manifests, err := filepath.Glob(filepath.Join(stateDir, job, "chk-*", "_manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, m := range manifests {
		id, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "chk-"), 10, 64)
		if err != nil {
			t.Fatalf("checkpoint directory of %s: %v", m, err)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// runNode runs `node args` to its end and returns its exit status and stderr.
func runNode(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	}
	t.Fatalf("node %v: %v", args, err)
	return 0, ""
}

// flipByte flips one bit of the byte at offset off of file p (from the end
// when off is negative).
func flipByte(t *testing.T, p string, off int) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 0x01
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runKeycountArgs is a slow keycount run with checkpoints every 50 ms.
func runKeycountArgs(mode, out, stateDir string, n int64, k int) []string {
	return []string{"run", "keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k),
		"--parallelism", "2", "--out", out, "--state-dir", stateDir, "--sleep-ms", "0.02",
		"--checkpoint-mode", mode, "--checkpoint-interval", "50ms", "--log-level", "warn"}
}

// TestRestoreOlderCheckpointExactlyOnce kills a run with SIGKILL and restores
// the third-newest completed checkpoint: the output is rolled back to it and
// ends exactly once, the newer checkpoints are deleted with a warning, no
// checkpoint id is reused, and --restore latest afterwards is the restored
// run's newest checkpoint. (Checkpoints older than the restored one stay.)
func TestRestoreOlderCheckpointExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 100
	for _, mode := range []string{"unaligned", "aligned"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
			// Checkpoints every 20 ms: the job reaches checkpoint 8 early in
			// its run (at 50 ms a busy machine ended a run before it).
			args := append(runKeycountArgs(mode, out, stateDir, n, k), "--checkpoint-interval", "20ms")
			// Retention keeps 3; after 8 the newer two have committed output.
			killAfterCheckpoints(t, bin, args, stateDir, 8)
			logCommittedAtKill(t, out, n)
			ids := checkpointIDs(t, stateDir, "keycount")
			if len(ids) < 3 {
				t.Fatalf("checkpoints %v after the kill, want at least 3", ids)
			}
			older, newest := ids[len(ids)-3], ids[len(ids)-1]
			t.Logf("killed with checkpoints %v; restoring %d", ids, older)

			code, stderr := runNode(t, bin, append(args, "--restore", fmt.Sprint(older))...)
			if code != 0 {
				t.Fatalf("restore %d: exit %d\n%s", older, code, stderr)
			}
			verifyKeycount(t, out, n, k)
			for _, id := range ids {
				if id > older && !strings.Contains(stderr, fmt.Sprintf(`"checkpoint":%d,"restored":%d`, id, older)) {
					t.Errorf("no warning that newer checkpoint %d was deleted:\n%s", id, stderr)
				}
			}
			after := checkpointIDs(t, stateDir, "keycount")
			for _, id := range after {
				if id > older && id <= newest {
					t.Fatalf("checkpoints after the restored run %v: %d is a deleted or reused id (restored %d, newest before %d)", after, id, older, newest)
				}
			}
			if len(after) == 0 || after[len(after)-1] <= newest {
				t.Fatalf("checkpoints after the restored run %v: none newer than %d", after, newest)
			}

			code, stderr = runNode(t, bin, append(args, "--restore", "latest")...)
			if code != 0 {
				t.Fatalf("restore latest after the restored run: exit %d\n%s", code, stderr)
			}
			verifyKeycount(t, out, n, k)
		})
	}
}

// TestRestoreCorruptNewestCheckpoint breaks the newest checkpoint of a killed
// run (a flipped byte in its manifest, or in a key group of a task's state):
// restoring it by id fails with the checkpoint (and task and key group)
// named; --restore latest warns that it skips it, restores the previous one
// and the output is exactly once.
func TestRestoreCorruptNewestCheckpoint(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 100
	for _, tc := range []struct {
		name  string
		file  string // in the newest checkpoint's directory
		names []string
	}{
		{"manifest", "_manifest", []string{"manifest", "corrupt"}},
		// Aligned, so a count task's state blob holds key groups only.
		{"key group", filepath.Join("count", "0", "state"), []string{"task count[0]", "key group", "crc32c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
			args := runKeycountArgs("aligned", out, stateDir, n, k)
			killAfterCheckpoints(t, bin, args, stateDir, 6)
			ids := checkpointIDs(t, stateDir, "keycount")
			newest := ids[len(ids)-1]
			flipByte(t, filepath.Join(stateDir, "keycount", fmt.Sprintf("chk-%020d", newest), tc.file), 0)
			if tc.file == "_manifest" {
				// The header alone would do; break the body's checksum too.
				flipByte(t, filepath.Join(stateDir, "keycount", fmt.Sprintf("chk-%020d", newest), tc.file), -1)
			}
			t.Logf("killed with checkpoints %v; broke %s of %d", ids, tc.file, newest)

			code, stderr := runNode(t, bin, append(args, "--restore", fmt.Sprint(newest))...)
			last := lastLine(stderr)
			if code != 1 || !strings.Contains(last, fmt.Sprintf("checkpoint %d", newest)) {
				t.Fatalf("restore of the broken checkpoint %d: exit %d, last line %q; want exit 1 naming it", newest, code, last)
			}
			for _, w := range tc.names {
				if !strings.Contains(last, w) {
					t.Fatalf("restore of the broken checkpoint %d: %q does not name %q", newest, last, w)
				}
			}

			code, stderr = runNode(t, bin, append(args, "--restore", "latest")...)
			if code != 0 {
				t.Fatalf("restore latest: exit %d\n%s", code, stderr)
			}
			warned := false
			for _, l := range strings.Split(stderr, "\n") {
				if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, fmt.Sprintf(`"checkpoint":%d,`, newest)) &&
					strings.Contains(l, "skipping a checkpoint") && strings.Contains(l, "corrupt") {
					warned = true
				}
			}
			if !warned {
				t.Fatalf("restore latest logged no warning that it skipped checkpoint %d:\n%s", newest, stderr)
			}
			verifyKeycount(t, out, n, k)
		})
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
