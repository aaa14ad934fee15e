package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/store"
)

// TestClusterRunsAJobOverNodes: three node processes; a submitted keycount
// is spread over them, its messages are readable with `node inspect`, the
// status lists its tasks and checkpoints, and the output is exactly once.
func TestClusterRunsAJobOverNodes(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	c := startCluster(t, bin, []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	const n, k = 300000, 100 // about 6 s at 0.06 ms per record and parallelism 3: long enough to watch

	inspect := exec.Command(bin, "inspect", "weir.keycount.>", "--for", "60s", "--nats", c.url)
	lines := &lockedBuffer{}
	inspect.Stdout = lines
	if err := inspect.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = inspect.Process.Kill(); _ = inspect.Wait() }()

	_, sout, done := c.submitAttached(pacedKeycountArgs(out, n, k, 0.06)...)
	s := c.waitStatus("tasks on several nodes and a checkpoint", func(s statusView) bool {
		id, _ := jobCheckpoints(s, "keycount")
		nodes := map[string]bool{}
		for _, j := range s.Jobs {
			for _, node := range j.Tasks {
				nodes[node] = true
			}
		}
		return id > 0 && len(nodes) >= 2
	})
	t.Logf("status while running: %+v", s.Jobs)
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit: %v\n%s", err, sout.String())
	}
	if !strings.Contains(sout.String(), "job keycount finished") {
		t.Fatalf("submit did not report the end:\n%s", sout.String())
	}
	verifyKeycount(t, out, n, k)

	// Every node keeps copies of its tasks' checkpoint state, and drops
	// them as the coordinator deletes old checkpoints (--retain 3): a node
	// keeps no checkpoint the store does not, retained or read by a retained
	// one (queued buffers an earlier checkpoint stored, referred to again).
	// The last round of retention may end after the parts stopped: a node
	// may still hold up to 2 checkpoints more (as many as may be in flight).
	keep := storeKeeps(t, c.url, "keycount")
	for _, node := range []string{"n1", "n2", "n3"} {
		chk, _ := filepath.Glob(filepath.Join(c.dir, node, "state", "keycount", "chk-*"))
		if len(chk) > len(keep)+2 {
			t.Fatalf("node %s keeps %d checkpoints in its workdir; the store keeps %d (%v: --retain 3 and what they read), want at most 2 more",
				node, len(chk), len(keep), keep)
		}
	}

	// What `node inspect` printed: every message type, decoded.
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(lines.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Type       string `json:"type"`
			Checkpoint uint64 `json:"checkpoint"`
			Records    int    `json:"records"`
			Error      string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("inspect printed a line that is not JSON: %v: %s", err, sc.Text())
		}
		if m.Error != "" {
			t.Fatalf("inspect could not decode a message: %s", sc.Text())
		}
		if m.Type == "barrier" && m.Checkpoint == 0 {
			t.Fatalf("barrier without its checkpoint id: %s", sc.Text())
		}
		if m.Type == "buffer" && m.Records == 0 {
			t.Fatalf("buffer without records: %s", sc.Text())
		}
		seen[m.Type]++
	}
	for _, typ := range []string{"buffer", "barrier", "credit", "control", "eos"} {
		if seen[typ] == 0 {
			t.Fatalf("inspect saw no %s message (saw %v)", typ, seen)
		}
	}
	t.Logf("inspect saw %v", seen)
}

// TestClusterSurvivesAWorkerKill: SIGKILL a node that runs tasks (not the
// coordinator); its tasks restart on the others from the latest checkpoint
// and the output is exactly once.
func TestClusterSurvivesAWorkerKill(t *testing.T) {
	t.Parallel()
	c, out, sout, done := runOnCluster(t)
	s := c.waitCheckpoint("keycount", 2, "")
	victim := ""
	for _, j := range s.Jobs {
		for _, node := range j.Tasks {
			if node == "n3" {
				victim = "n3"
			}
		}
	}
	if victim == "" {
		t.Fatalf("no task placed on n3: %+v", s.Jobs)
	}
	c.kill(victim)
	start := time.Now()
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after killing %s: %v\n%s", victim, err, sout.String())
	}
	t.Logf("job finished %v after the kill", time.Since(start))
	verifyKeycount(t, out, n300k, k100)
	after := c.status()
	for _, node := range after.liveNodes() {
		if node == victim {
			t.Fatalf("killed node %s still answers", victim)
		}
	}
}

// TestClusterCoordinatorTakeover: SIGKILL the coordinator's node; another
// node takes the coordinator role from the last manifest and the job
// finishes exactly once; the attached submit follows it to the end.
func TestClusterCoordinatorTakeover(t *testing.T) {
	t.Parallel()
	c, out, sout, done := runOnCluster(t)
	c.waitCheckpoint("keycount", 2, "n2")
	c.kill("n2")
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after killing the coordinator: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n300k, k100)
	for _, j := range c.status().Jobs {
		if j.Name == "keycount" && (j.Coordinator == "n2" || j.State != "finished") {
			t.Fatalf("job record after takeover: %+v", j)
		}
	}
}

// TestClusterGracefulLeave: SIGTERM to a node that runs tasks makes it hand
// its work over and exit cleanly; the job finishes exactly once on the
// others. The nodes keep a copy of their tasks' checkpoint state in their
// working directories.
func TestClusterGracefulLeave(t *testing.T) {
	t.Parallel()
	c, out, sout, done := runOnCluster(t)
	c.waitCheckpoint("keycount", 2, "")
	local, _ := filepath.Glob(filepath.Join(c.dir, "n3", "state", "keycount", "chk-*", "*"))
	if len(local) == 0 {
		t.Fatal("node n3 keeps no copy of its tasks' state in its workdir")
	}
	n3 := c.nodes["n3"]
	if err := n3.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-n3.exited:
		if err != nil {
			t.Fatalf("n3 did not exit cleanly on SIGTERM: %v\n%s", err, lastBytes(n3.stderr.String(), 3000))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("n3 did not exit within 30s of SIGTERM")
	}
	delete(c.nodes, "n3")
	if !strings.Contains(n3.stderr.String(), "node stopped") {
		t.Fatalf("n3's log does not show a graceful stop:\n%s", lastBytes(n3.stderr.String(), 3000))
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after n3 left: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n300k, k100)
}

// TestClusterNodeRestartedQuickly: a node SIGKILLed and started again with
// the same id and workdir before the heartbeat timeout is noticed by its new
// incarnation: the tasks it ran restart and the output is exactly once.
func TestClusterNodeRestartedQuickly(t *testing.T) {
	t.Parallel()
	c, out, sout, done := runOnCluster(t)
	c.waitCheckpoint("keycount", 2, "")
	c.kill("n3")
	c.startNode("n3", []string{"--nats", c.url})
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after n3 restarted: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n300k, k100)
	// The job's coordinator, n2 unless a busy machine let its lease lapse
	// and n1 took the job over, noticed the new incarnation.
	logs := c.nodes["n1"].stderr.String() + c.nodes["n2"].stderr.String()
	if !strings.Contains(logs, "n3 returned: placing its tasks back") {
		t.Fatalf("no coordinator noticed n3's restart:\n%s\n%s", lastBytes(c.nodes["n1"].stderr.String(), 2000), lastBytes(c.nodes["n2"].stderr.String(), 2000))
	}
}

// runOnCluster starts three nodes and submits a keycount of 300,000 records
// coordinated by n2, attached; it returns when the job has run.
func runOnCluster(t *testing.T) (*testCluster, string, *lockedBuffer, chan error) {
	t.Helper()
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	_, sout, done := c.submitAttached(append(keycountArgs(out, n300k, k100), "--coordinator", "n2")...)
	return c, out, sout, done
}

// The size of the keycount runs of the failure tests: with keycountArgs'
// 30 µs per record in the count stage, about 3 s of sleeping per instance.
const n300k, k100 = 300000, 100

// storeKeeps is the set of checkpoints of job the cluster's JetStream store
// lists and those their manifests read sections of.
func storeKeeps(t *testing.T, url, job string) map[uint64]bool {
	t.Helper()
	st, err := store.NewJetStream(connectJetStream(t, url))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterDeadline)
	defer cancel()
	ids, err := st.List(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[uint64]bool{}
	for _, id := range ids {
		keep[id] = true
		m, err := st.Manifest(ctx, job, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range store.ReferencedCheckpoints(m) {
			keep[r] = true
		}
	}
	return keep
}
