package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	clusternode "github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/rescale"
)

// liveRescaleArgs is a keycount job that runs until cancelled, at
// parallelism 2, with a slow count stage and unaligned checkpoints.
func liveRescaleArgs(out string) []string {
	return []string{"keycount", "--records", "-1", "--keys", "100", "--parallelism", "2", "--out", out,
		"--sleep-ms", "0.01", "--checkpoint-interval", "100ms", "--checkpoint-mode", "unaligned",
		"--coordinator", "n2", "--log-level", "warn"}
}

// rescaleStatusView is a job's rescales in `node status --json`.
type rescaleStatusView struct {
	Jobs []struct {
		Name     string `json:"name"`
		Rescales *struct {
			Count int `json:"count"`
			Last  *struct {
				Seq     uint64 `json:"seq"`
				Changes []struct {
					Operator string `json:"operator"`
					From     int    `json:"from"`
					To       int    `json:"to"`
				} `json:"changes"`
				TookMs   float64 `json:"took_ms"`
				Moved    int     `json:"moved"`
				MinMoves int     `json:"min_moves"`
			} `json:"last"`
		} `json:"rescales"`
	} `json:"jobs"`
}

// TestClusterLiveRescale: keycount on three `node start` processes, with a
// slow count stage and unaligned checkpoints, is rescaled live with `node
// rescale` 2 → 3 → 1 → 4 while it runs, then cancelled: each rescale
// commits (moving the fewest key groups), removed instances stop, the job
// never restarts, `node status` shows the rescales, the next checkpoint has
// the new table, and the output is exactly one run's prefix: every key's
// counts 1, 2, … once each and in order.
func TestClusterLiveRescale(t *testing.T) {
	t.Parallel()
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	_, sout, done := c.submitAttached(liveRescaleArgs(out)...)
	c.waitCheckpoint("keycount", 1, "")
	for _, step := range []struct{ p, moves string }{{"3", "count 2→3 moves 42 of 128 (min 42)"}, {"1", "count 3→1 moves 85 of 128 (min 85)"},
		{"4", "count 1→4 moves 96 of 128 (min 96)"}} {
		code, stdout, stderr := c.client("rescale", "keycount", "--operator", "count", "--parallelism", step.p)
		if code != 0 || !strings.Contains(stdout, "planned: "+step.moves) || !strings.Contains(stdout, "committed: took") ||
			!strings.Contains(stdout, "of keycount: throughput") {
			t.Fatalf("node rescale to %s: exit %d\n%s\n%s", step.p, code, stdout, stderr)
		}
		t.Logf("node rescale keycount --operator count --parallelism %s:\n%s", step.p, stdout)
		if step.p == "1" {
			// The removed instances, on other nodes too, stop once they
			// have handed off and finished.
			c.waitStatus("the removed count instances stopped", func(s statusView) bool { return countPlaced(s, "keycount", "count[") == 1 })
		}
	}
	s := c.status()
	for _, j := range s.Jobs {
		if j.Name == "keycount" && j.Restarts != 0 {
			t.Fatalf("the job restarted %d times during live rescales", j.Restarts)
		}
	}
	if n := countPlaced(s, "keycount", "count["); n != 4 {
		t.Fatalf("status places %d count instances, want 4", n)
	}
	code, stdout, stderr := c.client("status", "--json", "--wait", "500ms")
	var rs rescaleStatusView
	if err := json.Unmarshal([]byte(stdout), &rs); code != 0 || err != nil {
		t.Fatalf("node status --json: exit %d, %v\n%s", code, err, stderr)
	}
	if len(rs.Jobs) != 1 || rs.Jobs[0].Rescales == nil || rs.Jobs[0].Rescales.Count != 3 || rs.Jobs[0].Rescales.Last == nil ||
		rs.Jobs[0].Rescales.Last.Seq != 3 || rs.Jobs[0].Rescales.Last.Moved != 96 || rs.Jobs[0].Rescales.Last.MinMoves != 96 ||
		len(rs.Jobs[0].Rescales.Last.Changes) != 1 || rs.Jobs[0].Rescales.Last.Changes[0].To != 4 {
		t.Fatalf("status does not show the three rescales:\n%s", stdout)
	}
	if code, stdout, stderr := c.client("status"); code != 0 || !strings.Contains(stdout, "rescales of keycount: 3; last #3 count 1→4: committed") ||
		!strings.Contains(stdout, "lowest 100 ms bucket") {
		t.Fatalf("node status: exit %d, no rescale line:\n%s\n%s", code, stdout, stderr)
	}
	recordedFlowsSane(t, c, 3)
	cancelAndVerify(t, c, done, sout, out)
	m := latestManifest(t, filepath.Join(c.dir, "n2", "state"), "keycount")
	owners := map[int32]int{}
	for _, o := range m.KeyGroups["count"] {
		owners[o]++
	}
	if m.Parallelism["count"] != 4 || len(m.KeyGroups["count"]) != 128 || len(owners) != 4 {
		t.Fatalf("checkpoint %d after the rescales: count at %d, its table %v", m.CheckpointID, m.Parallelism["count"], m.KeyGroups["count"])
	}
	t.Logf("checkpoint %d: count at 4, key groups per instance %v", m.CheckpointID, owners)
}

// concurrentRescalesRefused sends two rescale requests for keycount at
// once: one runs, the other is refused because it is running. (Should the
// first commit before the second reaches the job, both run one after the
// other: the pair is tried again, at most three times.)
func concurrentRescalesRefused(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// count runs at 3; no pair asks for what count may run at then.
	for attempt, pair := range [][2]int{{2, 4}, {5, 6}, {7, 8}} {
		inbox := nc.NewRespInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range pair {
			req := clusternode.RescaleRequest{Job: "keycount", Targets: []rescale.Target{{Operator: "count", Parallelism: q}}}
			if err := nc.PublishRequest(clusternode.RescaleSubject, inbox, clusternode.Encode(req)); err != nil {
				t.Fatal(err)
			}
		}
		var planned, done, refused int
		for planned+refused < 2 || done < planned {
			m, err := sub.NextMsg(clusterDeadline)
			if err != nil {
				t.Fatalf("attempt %d: %d planned, %d committed, %d refused, then: %v", attempt, planned, done, refused, err)
			}
			var rep clusternode.RescaleReply
			if err := clusternode.Decode(m, &rep); err != nil {
				t.Fatal(err)
			}
			switch {
			case rep.Stage == clusternode.RescalePlanned:
				planned++
			case rep.Stage == clusternode.RescaleDone:
				done++
			case rep.Stage == clusternode.RescaleRunning:
				// Progress of a rescale that takes over a second (a busy
				// machine): its commit follows.
			case strings.Contains(rep.Error, "is running: "+rescale.ErrRescaleRunning.Error()):
				refused++
			default:
				t.Fatalf("attempt %d: unexpected answer %+v", attempt, rep)
			}
		}
		_ = sub.Unsubscribe()
		if refused == 1 {
			return
		}
		t.Logf("attempt %d: both rescales ran one after the other", attempt)
	}
	t.Fatal("two rescales at once were never refused as running")
}

// countPlaced is how many task instances named prefix… the job's
// coordinator places.
func countPlaced(s statusView, job, prefix string) int {
	n := 0
	for _, j := range s.Jobs {
		if j.Name != job {
			continue
		}
		for task := range j.Tasks {
			if strings.HasPrefix(task, prefix) {
				n++
			}
		}
	}
	return n
}

// cancelAndVerify cancels keycount, waits for its attached submit, and
// checks the output is a prefix of one run that got past where it was.
func cancelAndVerify(t *testing.T, c *testCluster, done chan error, sout *lockedBuffer, out string) {
	t.Helper()
	if code, stdout, stderr := c.client("cancel", "keycount"); code != 0 {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := waitSubmit(t, done, sout); err == nil || !strings.Contains(sout.String(), "cancel") {
		t.Fatalf("node submit of the cancelled job: %v\n%s", err, sout.String())
	}
	lines, err := verifyPrefix(out)
	if err != nil {
		t.Fatalf("output is not exactly one run's prefix: %v", err)
	}
	if lines == 0 {
		t.Fatal("the job committed no output")
	}
	t.Logf("%d lines, each key's counts once and in order", lines)
}

// TestClusterLiveRescaleNodeKilled: keycount runs count at 3, one
// instance on each of three nodes; right after `node rescale` takes count to
// 4 (every old instance hands key groups to the new one) is accepted, the
// node that is neither the coordinator's nor the one embedding NATS is
// SIGKILLed: the rescale commits or aborts, the job recovers from its
// latest checkpoint with the old tables or the new ones, runs on the two
// nodes left, and its output is exactly one run's prefix.
func TestClusterLiveRescaleNodeKilled(t *testing.T) {
	t.Parallel()
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	args := liveRescaleArgs(out)
	for i, a := range args {
		if a == "--parallelism" {
			args[i+1] = "3"
		}
	}
	_, sout, done := c.submitAttached(args...)
	s := c.waitCheckpoint("keycount", 1, "")
	// n1 embeds NATS and n2 coordinates: n3 goes.
	const victim = "n3"
	if s.Jobs[0].Tasks["count[2]"] != victim && s.Jobs[0].Tasks["count[1]"] != victim && s.Jobs[0].Tasks["count[0]"] != victim {
		t.Fatalf("no count instance on %s: %v", victim, s.Jobs[0].Tasks)
	}
	t.Logf("before the rescale: placement %v", s.Jobs[0].Tasks)
	code, stdout, stderr := c.client("rescale", "keycount", "--operator", "count", "--parallelism", "4", "--detach")
	if code != 0 || !strings.Contains(stdout, "planned: count 3→4") {
		t.Fatalf("node rescale --detach: exit %d\n%s\n%s", code, stdout, stderr)
	}
	c.kill(victim)
	after := waitRecoveredWithout(c, victim)
	outcome := ""
	for _, line := range strings.Split(c.nodes["n2"].stderr.String(), "\n") {
		if strings.Contains(line, `"message":"rescale committed"`) || strings.Contains(line, `"message":"rescale aborted"`) {
			outcome = line
		}
	}
	if outcome == "" {
		t.Fatalf("the job recovered, and its coordinator logged neither the rescale's commit nor its abort")
	}
	t.Logf("node rescale --detach:\n%sthe rescale: %s", stdout, outcome)
	first, _ := jobCheckpoints(after, "keycount")
	c.waitCheckpoint("keycount", first+1, "")
	cancelAndVerify(t, c, done, sout, out)
}

// TestClusterLiveRescaleTakeover: with aligned checkpoints, after `node
// rescale` takes count from 2 to 3 and commits, the coordinator's node is SIGKILLed: the node that takes
// the job over builds it at count 3 (the job record has the committed
// parallelism) and restores its latest checkpoint at it, and the output is
// exactly one run's prefix.
func TestClusterLiveRescaleTakeover(t *testing.T) {
	t.Parallel()
	c := startCluster(t, buildNode(t), []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	args := liveRescaleArgs(out)
	for i, a := range args {
		if a == "--checkpoint-mode" {
			args[i+1] = "aligned"
		}
	}
	_, sout, done := c.submitAttached(args...)
	c.waitCheckpoint("keycount", 1, "")
	code, stdout, stderr := c.client("rescale", "keycount", "--operator", "count", "--parallelism", "3")
	if code != 0 || !strings.Contains(stdout, "committed: took") {
		t.Fatalf("node rescale: exit %d\n%s\n%s", code, stdout, stderr)
	}
	c.kill("n2")
	c.waitStatus("another node coordinating count at 3", func(s statusView) bool {
		for _, j := range s.Jobs {
			if j.Name == "keycount" && j.State == "running" && j.Coordinator != "n2" && len(j.Checkpoints) > 0 {
				return countPlaced(s, "keycount", "count[") == 3
			}
		}
		return false
	})
	cancelAndVerify(t, c, done, sout, out)
}

// TestClusterRescaleErrors: `node rescale` refuses, saying why, an unknown
// job, flags without pairs or with an absurd parallelism, an unknown
// operator, a source, more instances than key groups, and a job that is no
// longer running; a refused request changes nothing (the job then rescales).
func TestClusterRescaleErrors(t *testing.T) {
	t.Parallel()
	c := startCluster(t, buildNode(t), []string{"n1"}, nil, nil)
	refused := func(want string, args ...string) {
		t.Helper()
		code, stdout, stderr := c.client(append([]string{"rescale"}, args...)...)
		if code == 0 || !strings.Contains(stderr, want) {
			t.Fatalf("node rescale %v: exit %d, want an error containing %q:\n%s\n%s", args, code, want, stdout, stderr)
		}
	}
	refused(`unknown job "nojob"`, "nojob", "--operator", "count", "--parallelism", "3")
	refused("want --operator NAME --parallelism N pairs", "keycount", "--operator", "count")
	refused("parallelism 0: want 1 to 32768", "keycount", "--operator", "count", "--parallelism", "0")
	refused(`parallelism "x" is not a number`, "keycount", "--operator", "count", "--parallelism", "x")
	out := filepath.Join(c.dir, "out.jsonl")
	args := liveRescaleArgs(out)
	for i, a := range args {
		if a == "n2" {
			args[i] = "n1"
		}
	}
	_, sout, done := c.submitAttached(args...)
	c.waitCheckpoint("keycount", 1, "")
	refused(`no operator "nope"`, "keycount", "--operator", "nope", "--parallelism", "3")
	refused(`source "source" cannot change parallelism live`, "keycount", "--operator", "source", "--parallelism", "3")
	refused(`operator "count"`, "keycount", "--operator", "count", "--parallelism", "129")
	if code, stdout, stderr := c.client("rescale", "keycount", "--operator", "count", "--parallelism", "3"); code != 0 {
		t.Fatalf("node rescale after refused ones: exit %d\n%s\n%s", code, stdout, stderr)
	}
	concurrentRescalesRefused(t, c.url)
	cancelAndVerify(t, c, done, sout, out)
	refused("job keycount is not running (cancelled)", "keycount", "--operator", "count", "--parallelism", "2")
}
