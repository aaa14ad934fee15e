//go:build long

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// TestClusterDeathStoppedNodeIsNotDead (issue 17): a node is slowed down
// (SIGSTOP 150 ms, SIGCONT 50 ms, for 2 s) and then stopped for 2 s, less
// than the 5 s heartbeat timeout. Its connection stays open, so probes of
// it time out rather than find it gone, and a timeout is no death: nobody
// declares it dead, and the job finishes exactly once.
func TestClusterDeathStoppedNodeIsNotDead(t *testing.T) {
	t.Parallel()
	const n = 1_500_000
	c, w, out, sout, done := startDeathJob(t, "n1", n)
	p := c.nodes["n2"].cmd.Process
	signal := func(s syscall.Signal) {
		if err := p.Signal(s); err != nil {
			t.Fatalf("signal n2 %v: %v", s, err)
		}
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		signal(syscall.SIGSTOP)
		hold(150 * time.Millisecond)
		signal(syscall.SIGCONT)
		hold(50 * time.Millisecond)
	}
	signal(syscall.SIGSTOP)
	hold(2 * time.Second)
	signal(syscall.SIGCONT)
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after stopping n2: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n, k100)
	w.noDeaths(t)
}

// TestClusterDeathReconnectWithinGraceIsNotDead (issue 17): n2 reaches NATS
// through a TCP proxy that drops its connection and refuses new ones for
// 300 ms, twice. n2 reconnects within the nodes' 1 s --disconnect-grace, so
// nobody declares it dead, although NATS answered probes of it with "no
// responders" meanwhile; the job finishes exactly once.
func TestClusterDeathReconnectWithinGraceIsNotDead(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, buildNode(t), []string{"n1"}, append(deathArgs, "--disconnect-grace", "1s"), nil, nil)
	proxy := startProxy(t, strings.TrimPrefix(c.url, "nats://"))
	n2 := c.startNode("n2", append(append([]string{"--nats", proxy.URL()}, deathArgs...), "--disconnect-grace", "1s"))
	c.restartNode("n3")
	c.waitStatus("every node seeing every node", func(s statusView) bool { return s.allSeeAll(3) })
	w := watchDeaths(t, c.url, "keycount")
	const n = 1_200_000
	out := filepath.Join(c.dir, "out.jsonl")
	_, sout, done := c.submitAttached(append(keycountArgs(out, n, k100), "--coordinator", "n1")...)
	c.waitCheckpoint("keycount", 2, "n1")
	reconnects := func(want int) func() bool {
		return func() bool { return strings.Count(n2.stderr.String(), "reconnected to NATS") >= want }
	}
	for i := 1; i <= 2; i++ {
		proxy.cut(300 * time.Millisecond)
		if !poll.Until(clusterDeadline, 10*time.Millisecond, reconnects(i)) {
			t.Fatalf("n2 did not reconnect after cut %d; its log:\n%s", i, lastBytes(n2.stderr.String(), 4000))
		}
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after cutting n2's connection: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n, k100)
	w.noDeaths(t)
}

// hold keeps what the test did (a process stopped or running) for d: the
// duration is the stimulus, not a wait for a condition.
func hold(d time.Duration) { <-time.After(d) }
