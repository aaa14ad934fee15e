package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// slowKeycount is reproduction 6 with n records over k keys at parallelism
// 2: a count stage that takes 50 ms per record, so one buffer of it lasts
// many seconds, and checkpoints every interval.
func slowKeycount(dir string, n, k int, interval string) []string {
	return []string{"run", "keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--sleep-ms", "50",
		"--out", filepath.Join(dir, "out.jsonl"), "--state-dir", filepath.Join(dir, "state"),
		"--checkpoint-interval", interval, "--log-level", "info"}
}

// recordsOut is the highest records_out of the run's progress log lines.
func recordsOut(stderr string) int64 {
	var most int64
	for _, line := range strings.Split(stderr, "\n") {
		var p struct {
			Message    string `json:"message"`
			RecordsOut int64  `json:"records_out"`
		}
		if json.Unmarshal([]byte(line), &p) == nil && p.Message == "progress" {
			most = max(most, p.RecordsOut)
		}
	}
	return most
}

// startNodeRun starts bin with args; its stdout and stderr are collected, and
// exited reports its end.
func startNodeRun(t *testing.T, bin string, args []string) (cmd *exec.Cmd, stdout, stderr *lockedBuffer, exited chan error) {
	t.Helper()
	cmd = exec.Command(bin, args...)
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return cmd, stdout, stderr, exited
}

// waitCheckpointWhileBusy waits until the slow run has committed a
// checkpoint, which it can only do while its count stage is in the middle of
// its first buffers (each takes it many seconds).
func waitCheckpointWhileBusy(t *testing.T, stateDir string, stderr *lockedBuffer, exited chan error) {
	t.Helper()
	ok := poll.Until(time.Minute, poll.Every, func() bool { return committedCheckpoints(stateDir, "keycount") >= 1 })
	select {
	case err := <-exited:
		t.Fatalf("run ended before it was stopped (%v); stderr:\n%s", err, lastBytes(stderr.String(), 3000))
	default:
	}
	if !ok {
		t.Fatalf("no checkpoint committed within a minute: a barrier waits behind the slow stage's buffer; stderr:\n%s", lastBytes(stderr.String(), 3000))
	}
}

// restoreAndVerify runs args with --restore latest to the end, without the
// slow stage's sleep (it is no part of the job's shape), and checks the
// output is exactly one run's.
func restoreAndVerify(t *testing.T, bin string, args []string, out string, n, k int) {
	t.Helper()
	second := exec.Command(bin, append(args, "--restore", "latest", "--sleep-ms", "0")...)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	if err := second.Run(); err != nil {
		t.Fatalf("restored run: %v\n%s", err, lastBytes(stderr.String(), 3000))
	}
	verifyKeycount(t, out, int64(n), k)
}

// TestSIGTERMStopsSlowOperatorMidBufferThenRestoreExactlyOnce is reproduction
// 6: SIGTERM reaches a run whose count stage spends many seconds on each
// buffer, with no periodic checkpoint to fall back on. The stop checkpoint
// must not wait for the buffer: the process exits soon, having committed the
// stop checkpoint with records left unprocessed, and --restore latest
// completes the output exactly once. Before, the stop checkpoint waited
// behind the buffer, the run stopped without it and the restore found none.
func TestSIGTERMStopsSlowOperatorMidBufferThenRestoreExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 20000, 10
	dir := t.TempDir()
	args := slowKeycount(dir, n, k, "1h")
	cmd, stdout, stderr, exited := startNodeRun(t, bin, append(args, "--json"))
	// Output has reached the sink: the count stage is inside its first
	// buffers, each of which takes it many seconds.
	busy := func() bool { return recordsOut(stderr.String()) > 0 }
	if !poll.Until(time.Minute, poll.Every, busy) {
		t.Fatalf("no progress line with output within a minute; stderr:\n%s", lastBytes(stderr.String(), 3000))
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("stopped run: %v\n%s", err, lastBytes(stderr.String(), 3000))
		}
	case <-time.After(time.Minute):
		t.Fatalf("no exit a minute after SIGTERM; stderr:\n%s", lastBytes(stderr.String(), 3000))
	}
	took := time.Since(signalled)
	var sum struct {
		RecordsIn  int64 `json:"records_in"`
		RecordsOut int64 `json:"records_out"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	if got := committedCheckpoints(filepath.Join(dir, "state"), "keycount"); got != 1 {
		t.Fatalf("%d checkpoints committed, want the stop checkpoint; stderr:\n%s", got, lastBytes(stderr.String(), 3000))
	}
	if sum.RecordsOut >= sum.RecordsIn {
		t.Fatalf("after SIGTERM %d records read and %d processed: the stop waited for the slow stage's buffers", sum.RecordsIn, sum.RecordsOut)
	}
	t.Logf("exited %v after SIGTERM with %d records read, %d processed", took.Round(time.Millisecond), sum.RecordsIn, sum.RecordsOut)
	restoreAndVerify(t, bin, args, filepath.Join(dir, "out.jsonl"), n, k)
}

// TestSecondSIGTERMExitsAtOnceLeavingLastCheckpoint sends a second SIGTERM
// to a run draining its input after the first (--drain, which at 50 ms a
// record would take minutes). The process must end at once, killed by the
// signal, and --restore latest from the last completed checkpoint must give
// the output exactly once.
func TestSecondSIGTERMExitsAtOnceLeavingLastCheckpoint(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 20000, 10
	dir := t.TempDir()
	args := slowKeycount(dir, n, k, "100ms")
	cmd, _, stderr, exited := startNodeRun(t, bin, append(args, "--drain"))
	waitCheckpointWhileBusy(t, filepath.Join(dir, "state"), stderr, exited)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The first signal has been taken once the job says it drains.
	draining := func() bool { return strings.Contains(stderr.String(), "stopping job: ending sources") }
	if !poll.Until(time.Minute, poll.Every, draining) {
		t.Fatalf("the run did not start draining after SIGTERM; stderr:\n%s", lastBytes(stderr.String(), 3000))
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("second SIGTERM: run ended with %v, want killed by the signal; stderr:\n%s", err, lastBytes(stderr.String(), 3000))
		}
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("second SIGTERM: run ended with %v, want killed by SIGTERM; stderr:\n%s", err, lastBytes(stderr.String(), 3000))
		}
	case <-time.After(time.Minute):
		t.Fatalf("no exit a minute after the second SIGTERM; stderr:\n%s", lastBytes(stderr.String(), 3000))
	}
	t.Logf("exited %v after the second SIGTERM; %d checkpoints committed", time.Since(signalled).Round(time.Millisecond),
		committedCheckpoints(filepath.Join(dir, "state"), "keycount"))
	restoreAndVerify(t, bin, args, filepath.Join(dir, "out.jsonl"), n, k)
}
