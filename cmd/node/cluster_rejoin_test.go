package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// TestClusterRestartedNodeGetsItsTasksBack: keycount with a slow stage on 3
// nodes (coordinator n2); n3 is SIGKILLed and started again with the same
// id and workdir.
//   - back within --local-wait (unaligned, and aligned checkpoints): the
//     coordinator places n3's tasks back on it, and they restore with 0
//     bytes read remotely (from n3's "restored from checkpoint" lines); the
//     output is exactly once.
//   - back after the wait ran out: n3's tasks were restored on n1 or n2
//     when it ran out, none went back to n3; still exactly once.
func TestClusterRestartedNodeGetsItsTasksBack(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	for _, tc := range []struct {
		name, wait string
		inTime     bool
		mode       string
	}{{"back in time", "30s", true, "unaligned"}, {"aligned back in time", "30s", true, "aligned"}, {"wait ran out", "1s", false, "unaligned"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startClusterWith(t, bin, []string{"n1", "n2", "n3"}, []string{"--local-wait", tc.wait}, nil, nil)
			out := filepath.Join(c.dir, "out.jsonl")
			// Aligned checkpoints run the job faster: a longer run leaves
			// time for two checkpoints before the kill (and so does a busy
			// machine).
			n, k := int64(600000), 100
			if tc.mode == "aligned" {
				n = 750000
			}
			_, sout, done := c.submitAttached("keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--parallelism", "3",
				"--out", out, "--sleep-ms", "0.02", "--checkpoint-interval", "100ms", "--checkpoint-mode", tc.mode, "--coordinator", "n2")
			s := c.waitCheckpoint("keycount", 2, "")
			before := tasksOn(s, "n3")
			if len(before) == 0 {
				t.Fatalf("no task on n3 before the kill: %+v", s.Jobs)
			}
			c.kill("n3")
			coordLog := c.nodes["n2"].stderr
			if !tc.inTime {
				ranOut := func() bool {
					return strings.Contains(coordLog.String(), "n3 did not return within 1s: placing its tasks elsewhere")
				}
				if !poll.Until(clusterDeadline, 20*time.Millisecond, ranOut) {
					t.Fatalf("the coordinator never gave up waiting for n3:\n%s", lastBytes(coordLog.String(), 3000))
				}
			}
			restarted := time.Now()
			again := c.restartNode("n3")
			if tc.inTime {
				// How long a restart takes to rejoin: --local-wait's default comes from it.
				back := func() bool { return strings.Contains(coordLog.String(), "n3 returned: placing its tasks back") }
				if !poll.Until(clusterDeadline, 5*time.Millisecond, back) {
					t.Fatalf("n3 never returned:\n%s", lastBytes(coordLog.String(), 3000))
				}
				t.Logf("n3 rejoined %v after it was started again", time.Since(restarted).Round(time.Millisecond))
			}
			if err := waitSubmit(t, done, sout); err != nil {
				t.Fatalf("node submit after n3 restarted: %v\n%s", err, sout.String())
			}
			verifyKeycount(t, out, n, k)
			restores := restoreLines(t, again.stderr.String())
			var local, remote int64
			var restored []string
			for _, r := range restores {
				local += r.LocalBytes
				remote += r.RemoteBytes
				restored = append(restored, r.Task)
			}
			sort.Strings(restored)
			if !tc.inTime {
				if !strings.Contains(coordLog.String(), "waiting for n3 to return") {
					t.Fatalf("the coordinator did not log its wait for n3:\n%s", lastBytes(coordLog.String(), 3000))
				}
				if strings.Contains(coordLog.String(), "n3 returned: placing its tasks back") {
					t.Fatalf("n3's tasks went back to it after the wait ran out:\n%s", lastBytes(coordLog.String(), 3000))
				}
				var moved []string
				for _, id := range []string{"n1", "n2"} {
					for _, r := range restoreLines(t, c.nodes[id].stderr.String()) {
						if slices.Contains(before, r.Task) {
							moved = append(moved, id+":"+r.Task)
						}
					}
				}
				if len(moved) == 0 {
					t.Fatalf("n3's tasks %v were not restored on n1 or n2 after the wait ran out", before)
				}
				t.Logf("after the wait ran out n3's tasks %v restored on %v; %d restores on n3 again", before, moved, len(restores))
				return
			}
			if !strings.Contains(coordLog.String(), "n3 returned: placing its tasks back") {
				t.Fatalf("the coordinator did not place n3's tasks back:\n%s", lastBytes(coordLog.String(), 3000))
			}
			if len(restores) < len(before) || local == 0 || remote != 0 {
				t.Fatalf("n3 ran %v before the kill; after its restart it restored %v: %d bytes locally, %d remotely: want them all, all local",
					before, restored, local, remote)
			}
			t.Logf("n3 ran %v; restarted, it restored %v: %d bytes locally, %d remotely", before, restored, local, remote)
		})
	}
}

// tasksOn lists the tasks of keycount that node runs, sorted.
func tasksOn(s statusView, node string) []string {
	var out []string
	for _, j := range s.Jobs {
		if j.Name != "keycount" {
			continue
		}
		for task, n := range j.Tasks {
			if n == node {
				out = append(out, task)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestClusterWholeRestartRestoresLocally: all three nodes of a cluster
// running keycount (unaligned checkpoints, n1 embedding NATS at a fixed
// address) are SIGKILLed and started again with their ids and workdirs,
// joined by an empty node n0 (which placement without state location would
// fill first: the smallest id). The job is taken over from its latest
// checkpoint, placed where the nodes' heartbeats say its state lies: at
// least 95 % of the restored bytes are read locally (from the restore lines
// of the nodes); the output is exactly once.
func TestClusterWholeRestartRestoresLocally(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, bin: bin, dir: t.TempDir(), nodes: map[string]*testNode{}}
	t.Cleanup(c.stopAll)
	embed := []string{"--embed-nats", fmt.Sprintf("127.0.0.1:%d", ports[0])}
	start := func(others ...string) {
		first := c.startNode("n1", embed)
		if !poll.Until(clusterDeadline, 20*time.Millisecond, func() bool { c.url = embeddedURL(first.stderr.String()); return c.url != "" }) {
			t.Fatalf("n1 did not report its NATS URL; stderr:\n%s", first.stderr.String())
		}
		for _, id := range others {
			c.restartNode(id)
		}
		c.waitStatus("every node seeing every node", func(s statusView) bool { return s.allSeeAll(len(others) + 1) })
	}
	start("n2", "n3")
	out := filepath.Join(c.dir, "out.jsonl")
	const n, k = 600000, 100
	_, sout, done := c.submitAttached("keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--parallelism", "3",
		"--out", out, "--sleep-ms", "0.02", "--checkpoint-interval", "100ms", "--checkpoint-mode", "unaligned", "--coordinator", "n2")
	c.waitCheckpoint("keycount", 2, "")
	for _, id := range []string{"n3", "n2", "n1"} {
		c.kill(id)
	}
	start("n2", "n3", "n0")
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after the whole cluster restarted: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n, k)
	var local, remote int64
	for _, id := range []string{"n0", "n1", "n2", "n3"} {
		for _, r := range restoreLines(t, c.nodes[id].stderr.String()) {
			local += r.LocalBytes
			remote += r.RemoteBytes
		}
	}
	if local+remote == 0 || float64(local) < 0.95*float64(local+remote) {
		t.Fatalf("after the whole cluster restarted: %d bytes restored locally, %d remotely: want at least 95%% local", local, remote)
	}
	t.Logf("after the whole cluster restarted: %d bytes restored locally, %d remotely (%.1f%% local)", local, remote,
		100*float64(local)/float64(local+remote))
	// The coordinator that took the job over verified the checkpoint
	// without reading from the store what the nodes it had heard hold (a
	// node heard only after its settle period would be read: so not all
	// of it, on a loaded machine).
	var verified []string
	for _, id := range []string{"n0", "n1", "n2", "n3"} {
		verified = append(verified, strings.Split(strings.TrimSpace(linesWith(c.nodes[id].stderr.String(), `"message":"checkpoint to restore verified"`)), "\n")...)
	}
	leftOut := false
	for _, l := range verified {
		var v struct {
			Bytes     int64 `json:"bytes"`
			HeldBytes int64 `json:"held_bytes"`
		}
		if l != "" && json.Unmarshal([]byte(l), &v) == nil && v.HeldBytes > 0 {
			leftOut = true
		}
	}
	if !leftOut {
		t.Fatalf("no coordinator verified the checkpoint leaving out what the nodes hold: %q", verified)
	}
	t.Logf("verified: %q", verified)
}

// TestClusterNodeWithAnotherNodesWorkdirAdoptsNothing: n3 runs tasks of
// keycount and is SIGKILLed; a node started with n3's workdir but the id n9
// refuses to start (the workdir is n3's), so it never joins, reports or
// restores any of n3's state, and n3's workdir is left as it was; the job
// moves n3's tasks to n1 and n2 and its output is exactly once.
func TestClusterNodeWithAnotherNodesWorkdirAdoptsNothing(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	c := startClusterWith(t, bin, []string{"n1", "n2", "n3"}, nil, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	const n, k = 300000, 100
	_, sout, done := c.submitAttached("keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--parallelism", "3",
		"--out", out, "--sleep-ms", "0.03", "--checkpoint-interval", "100ms", "--checkpoint-mode", "unaligned", "--coordinator", "n2")
	s := c.waitCheckpoint("keycount", 2, "")
	if len(tasksOn(s, "n3")) == 0 {
		t.Fatalf("no task on n3 before the kill: %+v", s.Jobs)
	}
	c.kill("n3")
	workdir := filepath.Join(c.dir, "n3")
	before := treeOf(t, workdir)
	if len(before) < 2 {
		t.Fatalf("n3's workdir holds %v: want its owner record and local state", before)
	}
	var stderr bytes.Buffer
	intruder := exec.Command(bin, "start", "--id", "n9", "--workdir", workdir, "--nats", c.url, "--heartbeat-timeout", "2s")
	intruder.Stderr = &stderr
	exited := make(chan error, 1)
	if err := intruder.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { exited <- intruder.Wait() }()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(stderr.String(), `belongs to node "n3"`) {
			t.Fatalf("n9 with n3's workdir: exit %v, stderr:\n%s\nwant a refusal naming n3", err, stderr.String())
		}
	case <-time.After(clusterDeadline):
		_ = intruder.Process.Kill()
		<-exited
		t.Fatalf("n9 with n3's workdir still runs after %v; stderr:\n%s", clusterDeadline, stderr.String())
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after n3 was lost: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n, k)
	for _, id := range []string{"n1", "n2"} {
		if strings.Contains(c.nodes[id].stderr.String(), `"peer":"n9"`) {
			t.Fatalf("%s saw n9:\n%s", id, linesWith(c.nodes[id].stderr.String(), "n9"))
		}
	}
	if after := treeOf(t, workdir); !maps.Equal(before, after) {
		t.Fatalf("n3's workdir changed under n9:\nbefore %v\nafter  %v", before, after)
	}
}

// treeOf maps every file under dir to its size and modification time.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d %d", info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
