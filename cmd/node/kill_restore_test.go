package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/samples/keycount"
)

// built is the node binary the tests share, compiled once per test run.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// TestMain removes the shared binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildNode compiles this binary once and returns its path.
func buildNode(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "weir-node-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "node")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// committedCheckpoints counts checkpoints with a manifest in the state dir.
func committedCheckpoints(stateDir, job string) int {
	m, _ := filepath.Glob(filepath.Join(stateDir, job, "chk-*", "_manifest"))
	return len(m)
}

// killAfterCheckpoints starts `node args` on a fresh state dir, waits until
// it holds at least 3 committed checkpoints (the default retention), the
// newest numbered minID or more, and SIGKILLs the process.
func killAfterCheckpoints(t *testing.T, bin string, args []string, stateDir string, minID uint64) {
	t.Helper()
	killAfterJobCheckpoints(t, bin, args, stateDir, "keycount", minID)
}

// killAfterJobCheckpoints is killAfterCheckpoints for any job.
func killAfterJobCheckpoints(t *testing.T, bin string, args []string, stateDir, job string, minID uint64) {
	t.Helper()
	first := exec.Command(bin, args...)
	var stderr bytes.Buffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	deadline := time.After(60 * time.Second)
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for ids := checkpointIDs(t, stateDir, job); len(ids) < 3 || ids[len(ids)-1] < minID; ids = checkpointIDs(t, stateDir, job) {
		select {
		case err := <-exited:
			t.Fatalf("first run ended before it could be killed (%v); stderr:\n%s", err, stderr.String())
		case <-deadline:
			first.Process.Kill()
			<-exited
			t.Fatalf("no 3 checkpoints up to id %d after 60s; stderr:\n%s", minID, stderr.String())
		case <-poll.C:
		}
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	if ws, ok := first.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("first run was not killed by the signal: %v", err)
	}
}

// TestKillAndRestoreExactlyOnce SIGKILLs `node run keycount` under backpressure
// with checkpoints every 50 ms, restores it with --restore latest, and checks
// that the committed output of both runs together is exactly one run's.
func TestKillAndRestoreExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 200000, 100
	for _, mode := range []string{"unaligned", "aligned"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
			args := []string{"run", "keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k),
				"--parallelism", "2", "--out", out, "--state-dir", stateDir, "--sleep-ms", "0.03",
				"--checkpoint-mode", mode, "--checkpoint-interval", "50ms", "--log-level", "warn"}
			killAfterCheckpoints(t, bin, args, stateDir, 3)
			before, _ := os.ReadFile(out)
			t.Logf("killed after %d checkpoints with %d committed lines", committedCheckpoints(stateDir, "keycount"), bytes.Count(before, []byte("\n")))

			second := exec.Command(bin, append(args, "--restore", "latest")...)
			var stderr2 bytes.Buffer
			second.Stderr = &stderr2
			if err := second.Run(); err != nil {
				t.Fatalf("restored run: %v\n%s", err, stderr2.String())
			}
			if err := keycount.VerifyFile(out, n, k); err != nil {
				t.Fatalf("output after kill and restore: %v", err)
			}
			if strings.Contains(stderr2.String(), `"level":"error"`) {
				t.Fatalf("restored run logged errors:\n%s", stderr2.String())
			}
		})
	}
}
