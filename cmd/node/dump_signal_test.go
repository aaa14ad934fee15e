package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// TestRunPrintsDumpOnSIGUSR1 sends SIGUSR1 to a real `node run` process and
// expects the state of every task on stderr.
func TestRunPrintsDumpOnSIGUSR1(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	cmd := exec.Command(bin, "run", "keycount", "--records", "-1", "--sleep-ms", "0.05", "--checkpoint-mode", "none")
	cmd.Dir = t.TempDir()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	const within = time.Minute
	if !poll.Until(within, poll.Every, func() bool { return strings.Contains(stderr.String(), "job deployed") }) {
		t.Fatalf("job not deployed within %v:\n%s", within, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	dumped := func() bool {
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(line, `"dump":`) && strings.Contains(line, `"task":"count[1]"`) &&
				strings.Contains(line, `"phase":`) && strings.Contains(line, `"channel":"source[0]→count[1]"`) {
				return true
			}
		}
		return false
	}
	if !poll.Until(within, poll.Every, dumped) {
		t.Fatalf("no dump naming the tasks and channels on stderr within %v:\n%s", within, lastBytes(stderr.String(), 4000))
	}
	select {
	case err := <-exited:
		t.Fatalf("node run exited on SIGUSR1: %v", err)
	default:
	}
}
