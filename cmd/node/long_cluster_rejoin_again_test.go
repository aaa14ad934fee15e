//go:build long

package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// TestClusterNodeKilledAgainAfterWholeRestartGetsItsTasksBack: keycount
// (unaligned checkpoints, coordinator n2) on 3 nodes with --local-wait 30s;
// all three are SIGKILLed and started again with their ids and workdirs
// (n1 embedding NATS at a fixed address), and the job is taken over. Then a
// node other than n1 and the new coordinator that runs tasks is SIGKILLed
// and started again, within the wait: its tasks return to it and restore
// with 0 bytes read remotely; the output is exactly once. (The returned
// node was once prepared at the checkpoint the take-over restored from,
// subsumed and deleted by then: the prepare failed and its tasks moved.)
func TestClusterNodeKilledAgainAfterWholeRestartGetsItsTasksBack(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, bin: bin, dir: t.TempDir(), nodes: map[string]*testNode{}, nodeArgs: []string{"--local-wait", "30s"}}
	t.Cleanup(c.stopAll)
	embed := append([]string{"--embed-nats", fmt.Sprintf("127.0.0.1:%d", ports[0])}, c.nodeArgs...)
	start := func() {
		first := c.startNode("n1", embed)
		if !poll.Until(clusterDeadline, 20*time.Millisecond, func() bool { c.url = embeddedURL(first.stderr.String()); return c.url != "" }) {
			t.Fatalf("n1 did not report its NATS URL; stderr:\n%s", first.stderr.String())
		}
		c.restartNode("n2")
		c.restartNode("n3")
		c.waitStatus("every node seeing every node", func(s statusView) bool { return s.allSeeAll(3) })
	}
	start()
	out := filepath.Join(c.dir, "out.jsonl")
	const n, k = 2400000, 100
	_, sout, done := c.submitAttached("keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--parallelism", "3",
		"--out", out, "--sleep-ms", "0.01", "--checkpoint-interval", "100ms", "--checkpoint-mode", "unaligned", "--coordinator", "n2")
	s := c.waitCheckpoint("keycount", 2, "")
	first, _ := jobCheckpoints(s, "keycount")
	for _, id := range []string{"n3", "n2", "n1"} {
		c.kill(id)
	}
	start()
	// Four checkpoints after the take-over: the one it restored from is
	// subsumed (3 are retained) and the victim holds its state of the
	// latest one locally.
	var coordinator string
	s = c.waitStatus("four checkpoints after the whole restart", func(s statusView) bool {
		for _, j := range s.Jobs {
			if j.Name == "keycount" && j.State == "running" && len(j.Checkpoints) >= 4 && int(j.Checkpoints[0].ID) > first {
				coordinator = j.Coordinator
				return true
			}
		}
		return false
	})
	victim := ""
	for _, id := range []string{"n2", "n3"} {
		if id != coordinator && len(tasksOn(s, id)) > 0 {
			victim = id
			break
		}
	}
	if victim == "" {
		t.Fatalf("no node but n1 and the coordinator %s runs tasks: %+v", coordinator, s.Jobs)
	}
	before := tasksOn(s, victim)
	c.kill(victim)
	again := c.restartNode(victim)
	coordLog := c.nodes[coordinator].stderr
	back := func() bool { return strings.Contains(coordLog.String(), victim+" returned: placing its tasks back") }
	if !poll.Until(clusterDeadline, 20*time.Millisecond, back) {
		t.Fatalf("%s never returned to the coordinator %s:\n%s", victim, coordinator, lastBytes(coordLog.String(), 3000))
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after %s restarted: %v\n%s", victim, err, sout.String())
	}
	verifyKeycount(t, out, n, k)
	var local, remote int64
	var restored []string
	for _, r := range restoreLines(t, again.stderr.String()) {
		local += r.LocalBytes
		remote += r.RemoteBytes
		restored = append(restored, r.Task)
	}
	sort.Strings(restored)
	if len(restored) < len(before) || local == 0 || remote != 0 {
		t.Fatalf("%s ran %v before its second kill; restarted, it restored %v: %d bytes locally, %d remotely: want them all, all local\ncoordinator %s:\n%s",
			victim, before, restored, local, remote, coordinator, linesWith(coordLog.String(), `"peer"`)+linesWith(coordLog.String(), "restored from")+linesWith(coordLog.String(), `"warn"`))
	}
	t.Logf("coordinator %s; %s ran %v; restarted, it restored %v: %d bytes locally, %d remotely", coordinator, victim, before, restored, local, remote)
}
