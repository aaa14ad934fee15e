package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
)

// startNodeEnv starts node id joining the cluster's NATS, with env added
// to its environment.
func (c *testCluster) startNodeEnv(id string, env ...string) *testNode {
	c.t.Helper()
	args := append([]string{"start", "--id", id, "--workdir", filepath.Join(c.dir, id), "--heartbeat-timeout", "2s", "--nats", c.url}, c.auth...)
	n := &testNode{id: id, cmd: exec.Command(c.bin, args...), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	n.cmd.Stderr = n.stderr
	n.cmd.Env = append(os.Environ(), env...)
	if err := n.cmd.Start(); err != nil {
		c.t.Fatalf("start node %s: %v", id, err)
	}
	go func() { n.exited <- n.cmd.Wait() }()
	c.nodes[id] = n
	return n
}

// recordedRescales is the rescale history of job in the job registry, as
// `node status --json` shows it.
func (c *testCluster) recordedRescales(job string) (*cluster.RescaleHistory, map[string]string, string) {
	c.t.Helper()
	code, stdout, stderr := c.client("status", "--json", "--wait", "500ms")
	var s struct {
		Jobs []struct {
			Name        string                  `json:"name"`
			State       string                  `json:"state"`
			Coordinator string                  `json:"coordinator"`
			Tasks       map[string]string       `json:"tasks"`
			History     *cluster.RescaleHistory `json:"rescale_history"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); code != 0 || err != nil {
		c.t.Fatalf("node status --json: exit %d, %v\n%s", code, err, stderr)
	}
	for _, j := range s.Jobs {
		if j.Name == job {
			return j.History, j.Tasks, j.Coordinator
		}
	}
	return nil, nil, ""
}

// TestClusterLiveRescaleCoordinatorKilled: keycount runs count at 2 on
// three `node start` processes, coordinated by n2, whose rescales are held
// just before their commit (a test hook: every task has done its part and
// the moved key groups' state has been handed to the new instance). `node
// rescale` takes count to 3, printing the plan and, each second, that it
// runs; once n2 holds it, n2 is SIGKILLed. Another
// node takes the job over at the parallelism its record has: count at 2
// (the rescale's commit was never recorded), from its latest checkpoint,
// which has the old table. The record marks the rescale interrupted, `node
// status` says so and how many count instances run, and the output is
// exactly one run's prefix.
func TestClusterLiveRescaleCoordinatorKilled(t *testing.T) {
	t.Parallel()
	c := startCluster(t, buildNode(t), []string{"n1", "n3"}, nil, nil)
	n2 := c.startNodeEnv("n2", "WEIR_TEST_HOLD_RESCALE_COMMIT=1")
	c.waitStatus("every node seeing every node", func(s statusView) bool { return s.allSeeAll(3) })
	out := filepath.Join(c.dir, "out.jsonl")
	_, sout, done := c.submitAttached(liveRescaleArgs(out)...)
	c.waitCheckpoint("keycount", 1, "n2")
	// Attached, it prints the plan, then every second that the rescale
	// runs.
	resc := exec.Command(c.bin, "rescale", "keycount", "--operator", "count", "--parallelism", "3", "--nats", c.url)
	rout := &lockedBuffer{}
	resc.Stdout, resc.Stderr = rout, rout
	if err := resc.Start(); err != nil {
		t.Fatal(err)
	}
	rdone := make(chan error, 1)
	go func() { rdone <- resc.Wait() }()
	progress := func() bool {
		return strings.Contains(rout.String(), "planned: count 2→3") && strings.Contains(rout.String(), "rescale 1 of keycount: running for")
	}
	if !poll.Until(clusterDeadline, 20*time.Millisecond, progress) {
		t.Fatalf("node rescale printed no plan and progress:\n%s", rout.String())
	}
	held := func() bool {
		return strings.Contains(n2.stderr.String(), `"message":"rescale held before its commit (test hook)"`)
	}
	if !poll.Until(clusterDeadline, 20*time.Millisecond, held) {
		t.Fatalf("n2 never held the rescale before its commit; its log:\n%s", lastBytes(n2.stderr.String(), 4000))
	}
	_ = resc.Process.Kill() // it would wait for an outcome n2 never sends
	<-rdone
	t.Logf("node rescale keycount --operator count --parallelism 3:\n%s", rout.String())
	recorded := func() bool {
		h, _, _ := c.recordedRescales("keycount")
		l := h.Latest()
		return l != nil && l.Seq == 1 && l.State == cluster.RescaleRunning && l.Coordinator == "n2"
	}
	if !poll.Until(clusterDeadline, 20*time.Millisecond, recorded) {
		h, _, _ := c.recordedRescales("keycount")
		t.Fatalf("the record does not show the rescale running on n2: %+v", h)
	}
	c.kill("n2")
	after := c.waitStatus("another node coordinating keycount with a checkpoint", func(s statusView) bool {
		for _, j := range s.Jobs {
			if j.Name == "keycount" && j.State == "running" && j.Coordinator != "n2" && j.Coordinator != "" && len(j.Checkpoints) > 0 {
				return countPlaced(s, "keycount", "count[") == 2
			}
		}
		return false
	})
	h, tasks, coord := c.recordedRescales("keycount")
	l := h.Latest()
	if h.Count != 1 || l == nil || l.Seq != 1 || l.State != cluster.RescaleInterrupted || !strings.Contains(l.Error, "coordinator n2 was lost") {
		t.Fatalf("after the takeover by %s the record has %+v", coord, h)
	}
	for task, node := range tasks {
		if node == "n2" {
			t.Fatalf("%s still placed on the killed n2: %v", task, tasks)
		}
	}
	code, stdout, stderr := c.client("status")
	if code != 0 || !strings.Contains(stdout, "rescales of keycount: 1; last #1 count 2→3: interrupted (its coordinator n2 was lost") ||
		!strings.Contains(stdout, "count now runs 2 instances") {
		t.Fatalf("node status does not tell the rescale was interrupted and count runs at 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "rescales of") {
			t.Logf("node status after the takeover by %s: %s", coord, line)
		}
	}
	first, _ := jobCheckpoints(after, "keycount")
	c.waitCheckpoint("keycount", first+1, "")
	cancelAndVerify(t, c, done, sout, out)
}

// recordedFlowsSane checks that keycount's record keeps n committed
// rescales, each with its figures and flow, present and sane (never their
// speed).
func recordedFlowsSane(t *testing.T, c *testCluster, n int) {
	t.Helper()
	h, _, _ := c.recordedRescales("keycount")
	if h == nil || h.Count != n || len(h.Recent) != n {
		t.Fatalf("the record keeps %+v, want %d rescales", h, n)
	}
	for _, e := range h.Recent {
		f := e.Figures
		if e.State != cluster.RescaleCommitted || f == nil || f.Flow == nil || f.Moved != f.Minimum || f.TookMs <= 0 {
			t.Fatalf("recorded rescale #%d: %+v (figures %+v)", e.Seq, e, f)
		}
		fl := f.Flow
		// The records before a rescale that follows another at once may
		// all have been under that one: only the first has a wait before
		// for sure.
		if fl.SteadyPerS <= 0 || fl.Buckets < 1 || fl.ZeroBuckets > fl.Buckets || fl.LowestPerS < 0 ||
			(e.Seq == 1 && fl.Before.Records <= 0) || fl.Moved.Records+fl.Unmoved.Records <= 0 {
			t.Fatalf("recorded rescale #%d: flow %+v", e.Seq, fl)
		}
	}
}
