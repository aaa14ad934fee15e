package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/web"
)

// pageURL finds the address `node run|start --http` announces.
var pageURL = regexp.MustCompile(`web page: (http://\S+/)`)

// webURL waits for node n to announce its page.
func webURL(t *testing.T, n *testNode) string {
	t.Helper()
	var url string
	if !poll.Until(clusterDeadline, 20*time.Millisecond, func() bool {
		if m := pageURL.FindStringSubmatch(n.stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	}) {
		t.Fatalf("node %s did not announce its web page", n.id)
	}
	return url
}

// apiGet reads url into v; false when it does not answer 200 with JSON.
func apiGet(url string, v any) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && json.Unmarshal(b, v) == nil
}

// TestWebAPIOfAThreeNodeCluster runs keycount on three real node
// processes serving --http, reads the API of the coordinator's node and of
// another node, then SIGKILLs a worker node and reads the restart, the
// failure's timeline and the nodes left.
func TestWebAPIOfAThreeNodeCluster(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	ids := []string{"n1", "n2", "n3"}
	c := startClusterWith(t, bin, ids, []string{"--http", "127.0.0.1:0"}, nil, nil)
	urls := map[string]string{}
	for _, id := range ids {
		urls[id] = webURL(t, c.nodes[id])
	}
	if code, _, stderr := c.client("submit", "keycount", "--records", "-1", "--keys", "200", "--parallelism", "3",
		"--sleep-ms", "0.01", "--checkpoint-interval", "300ms", "--coordinator", "n1", "--detach"); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, stderr)
	}
	// The coordinator's node: the graph, tasks on the three nodes with
	// their counters (those on n2 and n3 as their nodes report them), the
	// key-group map with each group's owner and node.
	var d web.JobDetail
	allLive := func(d web.JobDetail) bool {
		for _, tk := range d.Tasks {
			if !tk.Live || tk.RecordsIn <= 0 {
				return false
			}
		}
		return len(d.Tasks) == 9
	}
	spread := func(d web.JobDetail) map[string]int {
		on := map[string]int{}
		for _, tk := range d.Tasks {
			on[tk.Node]++
		}
		return on
	}
	if !poll.Until(clusterDeadline, 100*time.Millisecond, func() bool {
		d = web.JobDetail{}
		return apiGet(urls["n1"]+"api/jobs/keycount", &d) && d.State == "running" && len(d.Checkpoints) >= 2 &&
			len(spread(d)) == 3 && len(d.KeyGroups) == 1 && allLive(d)
	}) {
		t.Fatalf("n1's API never showed keycount running on 3 nodes with 2 checkpoints and every task's records: %+v", d)
	}
	// Rates of the tasks on other nodes, from two of their reports.
	if !poll.Until(clusterDeadline, 100*time.Millisecond, func() bool {
		d = web.JobDetail{}
		if !apiGet(urls["n1"]+"api/jobs/keycount", &d) || !allLive(d) {
			return false
		}
		for _, tk := range d.Tasks {
			if tk.Node != "n1" && tk.Operator == "source" && tk.InPerS > 0 {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("n1's API never showed a rate of a source task on another node: %+v", d.Tasks)
	}
	// The job's record totals count the sources on every node, in the
	// detail and in the list (read later: the counters only grow).
	var srcHere, srcElsewhere int64
	for _, tk := range d.Tasks {
		if tk.Operator != "source" {
			continue
		}
		if tk.Node == "n1" {
			srcHere += tk.RecordsIn
		} else {
			srcElsewhere += tk.RecordsIn
		}
	}
	if srcElsewhere == 0 || d.RecordsIn < srcHere+srcElsewhere/2 {
		t.Fatalf("n1's job total records_in %d, want about its sources' on all nodes: %d on n1 + %d on others",
			d.RecordsIn, srcHere, srcElsewhere)
	}
	var listed []web.JobSummary
	if !apiGet(urls["n1"]+"api/jobs", &listed) || len(listed) != 1 || listed[0].RecordsIn < d.RecordsIn {
		t.Fatalf("n1's /api/jobs %+v: want records_in at least the detail's %d read before", listed, d.RecordsIn)
	}
	if d.Coordinator != "n1" || len(d.Operators) != 3 || d.Operators[1].Parallelism != 3 || len(d.Tasks) != 9 {
		t.Fatalf("job %+v: want coordinator n1, 3 operators at parallelism 3, 9 tasks", d.JobSummary)
	}
	for g, kg := range d.KeyGroups[0].Groups {
		if kg.Node != d.Tasks[3+kg.Instance].Node || kg.Task != fmt.Sprintf("count[%d]", kg.Instance) || kg.Instance != g*3/128 {
			t.Fatalf("key group %d: %+v", g, kg)
		}
	}
	// Another node lists the job with its coordinator, and the three nodes.
	var jobs []web.JobSummary
	if !apiGet(urls["n2"]+"api/jobs", &jobs) || len(jobs) != 1 || jobs[0].Name != "keycount" || jobs[0].Coordinator != "n1" {
		t.Fatalf("n2's /api/jobs: %+v", jobs)
	}
	var other web.JobDetail
	if !apiGet(urls["n2"]+"api/jobs/keycount", &other) || len(other.Tasks) != 9 || other.State != "running" {
		t.Fatalf("n2's /api/jobs/keycount: %+v", other)
	}
	var nodes []web.Node
	if !apiGet(urls["n2"]+"api/nodes", &nodes) || len(nodes) != 3 || nodes[0].ID != "n1" || nodes[0].Slots != 8 {
		t.Fatalf("n2's /api/nodes: %+v, want n1, n2, n3", nodes)
	}

	// SIGKILL a node that runs tasks and is not n1 (coordinator and NATS).
	before := d.Failures.Restarts
	c.kill("n3")
	if !poll.Until(clusterDeadline, 100*time.Millisecond, func() bool {
		d = web.JobDetail{}
		if !apiGet(urls["n1"]+"api/jobs/keycount", &d) || d.Failures.Restarts <= before || spread(d)["n3"] > 0 {
			return false
		}
		for _, e := range d.Timeline {
			if e.Kind == "restart" {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("after SIGKILL of n3, n1's API never showed a restart without n3: %+v", d)
	}
	// The restores of the tasks on n2 (which keeps its tasks: its state is
	// there) are on the coordinator's timeline and in its restore counts.
	restoredOn := func(d web.JobDetail) map[string]int {
		nodeOf := map[string]string{}
		for _, tk := range d.Tasks {
			nodeOf[tk.Name] = tk.Node
		}
		on := map[string]int{}
		for _, e := range d.Timeline {
			if e.Kind == "restore" {
				on[nodeOf[e.Task]]++
			}
		}
		return on
	}
	if !poll.Until(clusterDeadline, 100*time.Millisecond, func() bool {
		d = web.JobDetail{}
		return apiGet(urls["n1"]+"api/jobs/keycount", &d) && spread(d)["n2"] > 0 &&
			restoredOn(d)["n2"] >= spread(d)["n2"] && d.Restores.Count >= len(d.Tasks)
	}) {
		t.Fatalf("n1's API never showed the restores of the tasks on n2: tasks on %v, restores on %v, %+v",
			spread(d), restoredOn(d), d.Restores)
	}
	if !poll.Until(clusterDeadline, 100*time.Millisecond, func() bool {
		nodes = nil
		return apiGet(urls["n1"]+"api/nodes", &nodes) && len(nodes) == 2
	}) {
		t.Fatalf("n1's /api/nodes after the kill: %+v, want n1 and n2", nodes)
	}
	t.Logf("after the kill: restarts %d, tasks on %v, timeline %+v", d.Failures.Restarts, spread(d), d.Timeline)
}
