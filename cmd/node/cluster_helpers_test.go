package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/samples/keycount"

	"github.com/weirstream/weir/internal/logcheck"
	"github.com/weirstream/weir/internal/poll"
)

// clusterDeadline bounds every wait of the cluster tests.
const clusterDeadline = 90 * time.Second

// testNode is one `node start` process.
type testNode struct {
	id     string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan error
}

// testCluster is a set of real node processes joined by the first one's
// embedded NATS server.
type testCluster struct {
	t     *testing.T
	bin   string
	dir   string
	url   string
	auth  []string // client flags for credentials
	nodes map[string]*testNode

	nodeArgs []string // flags every node gets (startClusterWith)
}

// restartNode starts node id (again: same id and workdir) joining the
// cluster's NATS, with the cluster's node flags.
func (c *testCluster) restartNode(id string) *testNode {
	c.t.Helper()
	return c.startNode(id, append(append([]string{"--nats", c.url}, c.nodeArgs...), c.auth...))
}

// startCluster starts ids as `node start` processes: the first embeds NATS
// (with the extra flags embedArgs), the others join it. It waits until every
// node is in the status.
func startCluster(t *testing.T, bin string, ids []string, embedArgs, auth []string) *testCluster {
	t.Helper()
	return startClusterWith(t, bin, ids, nil, embedArgs, auth)
}

// startClusterWith is startCluster with nodeArgs given to every node (and
// kept for the nodes a test starts again with restartNode).
func startClusterWith(t *testing.T, bin string, ids, nodeArgs, embedArgs, auth []string) *testCluster {
	t.Helper()
	c := &testCluster{t: t, bin: bin, dir: t.TempDir(), auth: auth, nodeArgs: nodeArgs, nodes: map[string]*testNode{}}
	t.Cleanup(c.stopAll)
	first := c.startNode(ids[0], append(append([]string{"--embed-nats", "127.0.0.1:0"}, nodeArgs...), append(embedArgs, auth...)...))
	reported := func() bool { c.url = embeddedURL(first.stderr.String()); return c.url != "" }
	if !poll.Until(clusterDeadline, 20*time.Millisecond, reported) {
		t.Fatalf("node %s did not report its NATS URL; stderr:\n%s", ids[0], first.stderr.String())
	}
	for _, id := range ids[1:] {
		c.restartNode(id)
	}
	c.waitStatus("every node seeing every node", func(s statusView) bool { return s.allSeeAll(len(ids)) })
	return c
}

// embeddedURL finds the URL the embedded server logged.
func embeddedURL(log string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var ev struct {
			Message, URL string
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Message == "embedded NATS server with JetStream running" {
			return ev.URL
		}
	}
	return ""
}

// startNode starts one node process with a 2 s heartbeat timeout.
func (c *testCluster) startNode(id string, args []string) *testNode {
	c.t.Helper()
	all := append([]string{"start", "--id", id, "--workdir", filepath.Join(c.dir, id), "--heartbeat-timeout", "2s"}, args...)
	n := &testNode{id: id, cmd: exec.Command(c.bin, all...), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	n.cmd.Stderr = n.stderr
	if err := n.cmd.Start(); err != nil {
		c.t.Fatalf("start node %s: %v", id, err)
	}
	go func() { n.exited <- n.cmd.Wait() }()
	c.nodes[id] = n
	return n
}

// kill sends SIGKILL to a node and waits for it.
func (c *testCluster) kill(id string) {
	c.t.Helper()
	n := c.nodes[id]
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatalf("kill %s: %v", id, err)
	}
	<-n.exited
	c.checkLog(id, n)
	delete(c.nodes, id)
}

// checkLog fails the test for every log line of node id with a key twice or
// a duration without its unit (logcheck), the first five of them shown.
func (c *testCluster) checkLog(id string, n *testNode) {
	bad, err := logcheck.Problems(strings.NewReader(n.stderr.String()))
	if err != nil {
		c.t.Errorf("node %s: read its log: %v", id, err)
	}
	for i, b := range bad {
		if i == 5 {
			c.t.Errorf("node %s: %d more log lines like these", id, len(bad)-i)
			break
		}
		c.t.Errorf("node %s: %s", id, b)
	}
}

// stopAll kills what is left; on failure it prints the nodes' logs.
func (c *testCluster) stopAll() {
	for id, n := range c.nodes {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.exited
		c.checkLog(id, n)
		if c.t.Failed() {
			c.t.Logf("stderr of node %s (last 4000 bytes):\n%s", id, lastBytes(n.stderr.String(), 4000))
		}
	}
}

// client runs a client command (status, submit, cancel, inspect) against the
// cluster and returns its exit code, stdout and stderr.
func (c *testCluster) client(args ...string) (int, string, string) {
	c.t.Helper()
	args = append(append(args, "--nats", c.url), c.auth...)
	cmd := exec.Command(c.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return code, stdout.String(), stderr.String()
}

// submitAttached starts `node submit` in the background.
func (c *testCluster) submitAttached(args ...string) (*exec.Cmd, *lockedBuffer, chan error) {
	c.t.Helper()
	args = append(append([]string{"submit"}, args...), "--nats", c.url)
	args = append(args, c.auth...)
	cmd := exec.Command(c.bin, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, out, done
}

// status reads `node status --json`, collecting answers for 500 ms.
func (c *testCluster) status() statusView {
	c.t.Helper()
	return c.statusWithin("500ms")
}

// statusWithin reads `node status --json`, collecting answers for wait.
func (c *testCluster) statusWithin(wait string) statusView {
	c.t.Helper()
	code, stdout, stderr := c.client("status", "--json", "--wait", wait)
	var s statusView
	if code != 0 {
		c.t.Fatalf("node status: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		c.t.Fatalf("node status --json: %v\n%s", err, stdout)
	}
	return s
}

// waitStatus polls the status until cond holds. A poll collects answers
// for 200 ms (a status waits out its whole window): a poll that missed a
// slow node's answer fails cond and is repeated, and a short poll notices a
// running job's checkpoints before a short job ends.
func (c *testCluster) waitStatus(what string, cond func(statusView) bool) statusView {
	c.t.Helper()
	deadline := time.Now().Add(clusterDeadline)
	for {
		s := c.statusWithin("200ms")
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: last status %+v", what, s)
		}
	}
}

// waitCheckpoint waits until job runs with checkpoint min or a later one
// (coordinated by coord, unless it is empty) and fails at once, not at the
// deadline, if the job ends first: a job too short for the machine's speed
// is then reported as such.
func (c *testCluster) waitCheckpoint(job string, min int, coord string) statusView {
	c.t.Helper()
	what := fmt.Sprintf("checkpoint %d of %s", min, job)
	if coord != "" {
		what += " coordinated by " + coord
	}
	return c.waitStatus(what, func(s statusView) bool {
		for _, j := range s.Jobs {
			if j.Name == job && (j.State == cluster.JobFinished || j.State == cluster.JobFailed || j.State == cluster.JobCancelled) {
				c.t.Fatalf("waiting for %s: the job ended (%s) first; it is too short for this machine", what, j.State)
			}
		}
		id, by := jobCheckpoints(s, job)
		return id >= min && (coord == "" || by == coord)
	})
}

// jobCheckpoints is how many checkpoints the job's coordinator reports.
func jobCheckpoints(s statusView, job string) (int, string) {
	for _, j := range s.Jobs {
		if j.Name == job && j.State == "running" && len(j.Checkpoints) > 0 {
			return int(j.Checkpoints[len(j.Checkpoints)-1].ID), j.Coordinator
		}
	}
	return 0, ""
}

// waitSubmit waits for an attached submit and returns its output.
func waitSubmit(t *testing.T, done chan error, out *lockedBuffer) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(clusterDeadline):
		t.Fatalf("node submit did not return within %v; output:\n%s", clusterDeadline, out.String())
	}
	return nil
}

// verifyKeycount checks the output file holds one uninterrupted run.
func verifyKeycount(t *testing.T, path string, n int64, k int) {
	t.Helper()
	if err := keycount.VerifyFile(path, n, k); err != nil {
		t.Fatalf("output is not exactly one run: %v", err)
	}
}

// keycountArgs are the flags of a keycount run that lasts a few seconds. At
// parallelism 3 each of the three nodes runs a pipeline (source[i],
// count[i], and the single sink on one of them).
func keycountArgs(out string, n int64, k int) []string {
	return pacedKeycountArgs(out, n, k, 0.03)
}

// pacedKeycountArgs is keycountArgs with sleepMs per record in the keyed
// stage: the job lasts about n*sleepMs/3 ms.
func pacedKeycountArgs(out string, n int64, k int, sleepMs float64) []string {
	return []string{"keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--parallelism", "3",
		"--out", out, "--sleep-ms", fmt.Sprint(sleepMs), "--checkpoint-interval", "100ms", "--log-level", "warn"}
}

// waitRecoveredWithout waits until keycount runs again after a restart,
// on no task of victim, with a checkpoint.
func waitRecoveredWithout(c *testCluster, victim string) statusView {
	c.t.Helper()
	return c.waitStatus("the job recovered after the node was lost", func(s statusView) bool {
		for _, job := range s.Jobs {
			if job.Name == "keycount" && job.State == "running" && job.Restarts >= 1 {
				for _, node := range job.Tasks {
					if node == victim {
						return false
					}
				}
				return len(job.Checkpoints) > 0
			}
		}
		return false
	})
}
