package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/logcheck"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/internal/scrape"
)

// scrapeNode scrapes node id's /metrics.
func (c *testCluster) scrapeNode(id string) scrape.Families {
	c.t.Helper()
	n := c.nodes[id]
	var addr string
	if !poll.Until(clusterDeadline, 10*time.Millisecond, func() bool { addr = scrape.LoggedAddr(n.stderr.String()); return addr != "" }) {
		c.t.Fatalf("node %s logged no HTTP address", id)
	}
	f, err := scrape.Get("http://" + addr + "/metrics")
	if err != nil {
		c.t.Fatalf("node %s: %v", id, err)
	}
	return f
}

// restartsView is a job's restarts in `node status --json`.
type restartsView struct {
	Jobs []struct {
		Name     string         `json:"name"`
		State    string         `json:"state"`
		Restarts int            `json:"restarts"`
		Causes   map[string]int `json:"restart_causes"`
	} `json:"jobs"`
}

// TestClusterMetricsWhileANodeIsKilled runs keycount on three nodes started
// with --http, scrapes every node's /metrics while the job runs, SIGKILLs
// n3 (which runs tasks, not the coordinator) and checks on the coordinator's
// /metrics that the restarts are counted with cause node_lost and that n3's
// heartbeat age rises while it is marked down. After the job ends, `node
// status` still counts the restarts (it showed 0 once the job had ended),
// with their cause, and no node logged a line with a duplicate key or a
// duration without its unit.
func TestClusterMetricsWhileANodeIsKilled(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, buildNode(t), []string{"n1", "n2", "n3"}, []string{"--http", "127.0.0.1:0"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	// A slower stage than keycountArgs' (0.04 ms per record): the job runs
	// for some seconds, through the scrapes, the status checks and the kill.
	args := keycountArgs(out, n300k, k100)
	for i := range args {
		if args[i] == "--sleep-ms" {
			args[i+1] = "0.04"
		}
	}
	_, sout, done := c.submitAttached(append(args, "--coordinator", "n2")...)
	c.waitCheckpoint("keycount", 2, "")
	job := map[string]string{"job": "keycount"}
	for _, id := range []string{"n1", "n2", "n3"} {
		f := c.scrapeNode(id)
		if v, ok := f.Sum("weir_task_records_in_total", job); !ok || v <= 0 {
			t.Errorf("node %s: records in %v (found %v), want > 0", id, v, ok)
		}
		// Messages per link between nodes: this node sent to another
		// node, and received from one.
		sent, received := 0.0, 0.0
		for _, other := range []string{"n1", "n2", "n3"} {
			if other == id {
				continue
			}
			v, _ := f.Sum("weir_nats_messages_total", map[string]string{"direction": "sent", "from_node": id, "to_node": other})
			sent += v
			v, _ = f.Sum("weir_nats_messages_total", map[string]string{"direction": "received", "from_node": other, "to_node": id})
			received += v
		}
		if sent <= 0 || received <= 0 {
			t.Errorf("node %s: %v messages sent to and %v received from the other nodes", id, sent, received)
		}
		if up, ok := f.Sum("weir_node_up", map[string]string{"node": "n3"}); !ok || up != 1 {
			t.Errorf("node %s: n3 up %v (found %v), want 1", id, up, ok)
		}
	}
	if v, _ := c.scrapeNode("n2").Sum("weir_checkpoint_duration_seconds", job); v < 2 {
		t.Errorf("coordinator n2: %v checkpoints observed, want ≥ 2", v)
	}
	// The text status shows the running job's rates and backpressure;
	// --watch refreshes it until interrupted.
	if !poll.Until(clusterDeadline, 100*time.Millisecond, func() bool {
		_, text, _ := c.client("status", "--wait", "300ms")
		return ratesShown(text)
	}) {
		_, text, _ := c.client("status", "--wait", "300ms")
		t.Errorf("status shows no rates for keycount:\n%s", text)
	}
	c.watchStatus()
	c.kill("n3")
	var age1 float64
	dead := func() bool {
		f := c.scrapeNode("n2")
		r, _ := f.Sum("weir_restarts_total", map[string]string{"job": "keycount", "cause": "node_lost"})
		up, _ := f.Sum("weir_node_up", map[string]string{"node": "n3"})
		age1, _ = f.Sum("weir_node_heartbeat_age_seconds", map[string]string{"node": "n3"})
		return r >= 1 && up == 0
	}
	if !poll.Until(clusterDeadline, 50*time.Millisecond, dead) {
		t.Fatalf("coordinator n2 never counted a node_lost restart with n3 down")
	}
	if !poll.Until(clusterDeadline, 50*time.Millisecond, func() bool {
		age2, _ := c.scrapeNode("n2").Sum("weir_node_heartbeat_age_seconds", map[string]string{"node": "n3"})
		return age2 > age1
	}) {
		t.Errorf("n3's heartbeat age did not rise past %v s", age1)
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after killing n3: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n300k, k100)
	code, stdout, stderr := c.client("status", "--json", "--wait", "500ms")
	var s restartsView
	if code != 0 || json.Unmarshal([]byte(stdout), &s) != nil {
		t.Fatalf("node status: exit %d: %s%s", code, stdout, stderr)
	}
	if len(s.Jobs) != 1 || s.Jobs[0].State != "finished" || s.Jobs[0].Restarts < 1 || s.Jobs[0].Causes["node_lost"] != s.Jobs[0].Restarts {
		t.Errorf("status after the job ended: %+v; want finished with ≥ 1 restart, all node_lost", s.Jobs)
	}
	t.Logf("status after the kill: %+v", s.Jobs)
	if _, text, _ := c.client("status", "--wait", "300ms"); !strings.Contains(text, "(node_lost ") {
		t.Errorf("text status names no restart cause:\n%s", text)
	}
	for id, n := range c.nodes {
		bad, err := logcheck.Problems(strings.NewReader(n.stderr.String()))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Errorf("node %s: %s", id, b)
		}
	}
}

// ratesShown reports whether a text status shows keycount's records per
// second (non-zero) and a backpressure share for its source.
func ratesShown(text string) bool {
	_, rates, ok := strings.Cut(text, "RECORDS/S IN")
	if !ok {
		return false
	}
	for _, line := range strings.Split(rates, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "keycount" && f[1] != "0" && strings.Contains(line, "source ") && strings.Contains(line, "%") {
			return true
		}
	}
	return false
}

// watchStatus runs `node status --watch --interval 1s --wait 300ms`, waits
// for two refreshes and ends it with SIGINT, as a person would.
func (c *testCluster) watchStatus() {
	c.t.Helper()
	cmd := exec.Command(c.bin, "status", "--watch", "--interval", "1s", "--wait", "300ms", "--nats", c.url)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if !poll.Until(clusterDeadline, 20*time.Millisecond, func() bool { return strings.Count(out.String(), "status at ") >= 2 }) {
		_ = cmd.Process.Kill()
		<-done
		c.t.Fatalf("status --watch did not refresh twice:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		c.t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			c.t.Errorf("status --watch after SIGINT: %v\n%s", err, out.String())
		}
	case <-time.After(clusterDeadline):
		_ = cmd.Process.Kill()
		c.t.Fatal("status --watch did not end on SIGINT")
	}
	if !strings.Contains(out.String(), "RECORDS/S IN") {
		c.t.Errorf("status --watch shows no rates:\n%s", out.String())
	}
}
