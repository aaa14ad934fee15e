package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/samples/sessions"
)

// TestSessionsKillAndRestoreExactlyOnce SIGKILLs `node run sessions` (event
// time, session windows with timers, late clicks to a side output) after
// three unaligned checkpoints and restores it with --restore latest at
// another parallelism of the session operator: the sessions and late clicks
// of both runs together are exactly the straightforward computation's.
func TestSessionsKillAndRestoreExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, users, seed = 80000, 20, 9
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "sessions.jsonl"), filepath.Join(dir, "state")
	args := func(p int) []string {
		return []string{"run", "sessions", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(users), "--seed", fmt.Sprint(seed),
			"--parallelism", fmt.Sprint(p), "--out", out, "--state-dir", stateDir, "--sleep-ms", "0.03",
			"--checkpoint-mode", "unaligned", "--checkpoint-interval", "50ms", "--log-level", "warn"}
	}
	killAfterJobCheckpoints(t, bin, args(3), stateDir, "sessions", 3)
	second := exec.Command(bin, append(args(2), "--restore", "latest")...)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	if err := second.Run(); err != nil {
		t.Fatalf("restored run: %v\n%s", err, stderr.String())
	}
	if err := sessions.VerifyFiles(out, out+".late", seed, n, users); err != nil {
		t.Fatalf("output after kill and restore: %v", err)
	}
	if strings.Contains(stderr.String(), `"level":"error"`) {
		t.Fatalf("restored run logged errors:\n%s", stderr.String())
	}
}
