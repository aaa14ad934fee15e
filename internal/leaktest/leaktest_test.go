package leaktest

import (
	"strings"
	"testing"
	"time"
)

// blockedForLeakTest is the function a deliberately leaked goroutine blocks in.
func blockedForLeakTest(stop <-chan struct{}) { <-stop }

func TestWaitFindsALeakedGoroutineAndNamesIt(t *testing.T) {
	before := ignoreNow()
	stop := make(chan struct{})
	go blockedForLeakTest(stop)
	err := wait(100*time.Millisecond, before...)
	close(stop)
	if err == nil || !strings.Contains(err.Error(), "blockedForLeakTest") {
		t.Fatalf("wait = %v, want an error naming the leaked goroutine's function", err)
	}
}

func TestWaitIgnoresGoroutinesThatEndInTime(t *testing.T) {
	before := ignoreNow()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { blockedForLeakTest(stop); close(done) }()
	close(stop)
	if err := wait(Within, before...); err != nil {
		t.Fatalf("a goroutine that ended was reported: %v", err)
	}
	<-done
}

func TestWaitIgnoresGoroutinesThatWereRunningBefore(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { blockedForLeakTest(stop); close(done) }()
	before := ignoreNow()
	defer func() { close(stop); <-done }()
	if err := wait(Within, before...); err != nil {
		t.Fatalf("a goroutine running before the check was reported: %v", err)
	}
}

// TestCheckPassesACleanTest runs Check on a test that stops what it starts.
func TestCheckPassesACleanTest(t *testing.T) {
	Check(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { blockedForLeakTest(stop); close(done) }()
	t.Cleanup(func() { close(stop); <-done })
}

func TestCheckFailsATestThatLeaks(t *testing.T) {
	r := &Recorder{TB: t}
	CheckWithin(r, 100*time.Millisecond)
	stop := make(chan struct{})
	go blockedForLeakTest(stop)
	r.RunCleanups()
	close(stop)
	if len(r.Errs) != 1 || !strings.Contains(r.Errs[0], "outlived it") || !strings.Contains(r.Errs[0], "blockedForLeakTest") {
		t.Fatalf("errors %q, want one naming the leaked goroutine", r.Errs)
	}
}
