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
	// A dump waits 5 s for the actors; on a busy machine a task may answer
	// later and be left out, so the signal is sent again every 10 s.
	var dumps []string
	dumped := func() bool {
		dumps = dumps[:0]
		for _, line := range strings.Split(stderr.String(), "\n") {
			if !strings.Contains(line, `"dump":`) {
				continue
			}
			dumps = append(dumps, line)
			if strings.Contains(line, `"task":"count[1]"`) && strings.Contains(line, `"phase":`) &&
				strings.Contains(line, `"channel":"source[0]→count[1]"`) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(within)
	for ok := false; !ok; {
		if time.Now().After(deadline) {
			t.Fatalf("no dump naming the tasks and channels on stderr within %v; %d dumps:\n%s\nstderr ends:\n%s",
				within, len(dumps), strings.Join(dumps, "\n"), lastBytes(stderr.String(), 2000))
		}
		if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		ok = poll.Until(10*time.Second, poll.Every, dumped)
	}
	select {
	case err := <-exited:
		t.Fatalf("node run exited on SIGUSR1: %v", err)
	default:
	}
}
