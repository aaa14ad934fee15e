package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSecondSignalAfterTheReactionEndsTheProcess runs a child process that
// watches the stop signals as Main does and says "stopping" as soon as the
// first one ends its context (as a job says it stops). A second SIGTERM
// sent at that moment must end the child at once. Before, the default
// action came back on a goroutine of its own, racing the reaction: on a
// loaded machine the second signal could come first, be swallowed, and the
// process ran on (TestSecondSIGTERMExitsAtOnceLeavingLastCheckpoint: "no
// exit a minute after the second SIGTERM").
func TestSecondSignalAfterTheReactionEndsTheProcess(t *testing.T) {
	if os.Getenv("WEIR_STOP_SIGNAL_CHILD") == "1" {
		signalChild()
		return
	}
	for i := range 20 {
		child := exec.Command(os.Args[0], "-test.run=^TestSecondSignalAfterTheReactionEndsTheProcess$")
		child.Env = append(os.Environ(), "WEIR_STOP_SIGNAL_CHILD=1")
		out, err := child.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		expect := func(want string) {
			t.Helper()
			if !lines.Scan() || lines.Text() != want {
				_ = child.Process.Kill()
				_ = child.Wait()
				t.Fatalf("run %d: child said %q (%v), want %q", i, lines.Text(), lines.Err(), want)
			}
		}
		expect("ready")
		if err := child.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		expect("stopping")
		if err := child.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err = child.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %d: child ended with %v after the second SIGTERM, want killed by it", i, err)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("run %d: child ended with %v after the second SIGTERM, want killed by it", i, err)
		}
	}
}

// signalChild is the child of TestSecondSignalAfterTheReactionEndsTheProcess:
// it exits 3 if no second signal ends it within 30 s.
func signalChild() {
	ctx, release := onFirstSignal(stopSignals...)
	defer release()
	fmt.Println("ready")
	<-ctx.Done()
	fmt.Println("stopping")
	<-time.After(30 * time.Second)
	os.Exit(3)
}
