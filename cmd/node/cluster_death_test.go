package main

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster/coord"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/transport"
)

// deathArgs give the nodes of the death tests 4 slots and a 5 s heartbeat
// timeout: a node is declared dead for silence only after 5 s, so a death
// announced sooner comes from its closed connection.
var deathArgs = []string{"--slots", "4", "--heartbeat-timeout", "5s"}

// deathWatch collects, from the wire, the nodes' announcements that they
// declared a node dead and the coordinators' reports that a job runs.
type deathWatch struct {
	mu      sync.Mutex
	lost    []seenLost
	resumed []seenResumed
}

type seenLost struct {
	node.NodeLostNotice
	at time.Time
}

type seenResumed struct {
	coordinator string
	at          time.Time
}

// watchDeaths subscribes to node.LostSubject of every node and to
// node.ResumedSubject of job until the test ends.
func watchDeaths(t *testing.T, url, job string) *deathWatch {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w := &deathWatch{}
	if _, err := nc.Subscribe(node.LostSubject("*"), func(m *nats.Msg) {
		var n node.NodeLostNotice
		if err := node.Decode(m, &n); err != nil {
			t.Errorf("bad announcement of a death: %v", err)
			return
		}
		w.mu.Lock()
		w.lost = append(w.lost, seenLost{n, time.Now()})
		w.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe(node.ResumedSubject(job), func(m *nats.Msg) {
		e, err := transport.FromMsg(m)
		if err != nil {
			t.Errorf("bad job report: %v", err)
			return
		}
		var ev node.JobEvent
		if err := node.Decode(&nats.Msg{Subject: m.Subject, Data: e.Payload}, &ev); err != nil {
			t.Errorf("bad job report: %v", err)
			return
		}
		w.mu.Lock()
		w.resumed = append(w.resumed, seenResumed{ev.Coordinator, time.Now()})
		w.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// firstLost waits for the first announcement that victim is dead.
func (w *deathWatch) firstLost(t *testing.T, victim string) seenLost {
	t.Helper()
	var got seenLost
	found := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, l := range w.lost {
			if l.Node == victim {
				got = l
				return true
			}
		}
		return false
	}
	if !poll.Until(clusterDeadline, 10*time.Millisecond, found) {
		t.Fatalf("nobody announced %s dead within %v", victim, clusterDeadline)
	}
	return got
}

// resumedAfter waits for the first report, after since, that the job runs
// on a coordinator other than not.
func (w *deathWatch) resumedAfter(t *testing.T, since time.Time, not string) seenResumed {
	t.Helper()
	var got seenResumed
	found := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, r := range w.resumed {
			if r.at.After(since) && r.coordinator != not {
				got = r
				return true
			}
		}
		return false
	}
	if !poll.Until(clusterDeadline, 10*time.Millisecond, found) {
		t.Fatalf("the job did not run on a coordinator other than %s within %v", not, clusterDeadline)
	}
	return got
}

// noDeaths fails the test if any node was announced dead.
func (w *deathWatch) noDeaths(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lost {
		t.Errorf("node %s declared %s dead (%s)", l.By, l.Node, l.Reason)
	}
}

// startDeathJob starts n1, n2 (given extra flags) and n3, and a keycount
// of n records attached and coordinated by coordinator, and returns once it
// has two checkpoints.
func startDeathJob(t *testing.T, coordinator string, n int64, n2Args ...string) (*testCluster, *deathWatch, string, *lockedBuffer, chan error) {
	t.Helper()
	c := startClusterWith(t, buildNode(t), []string{"n1"}, deathArgs, nil, nil)
	c.startNode("n2", append(append([]string{"--nats", c.url}, deathArgs...), n2Args...))
	c.restartNode("n3")
	c.waitStatus("every node seeing every node", func(s statusView) bool { return s.allSeeAll(3) })
	w := watchDeaths(t, c.url, "keycount")
	out := filepath.Join(c.dir, "out.jsonl")
	_, sout, done := c.submitAttached(append(keycountArgs(out, n, k100), "--coordinator", coordinator)...)
	c.waitCheckpoint("keycount", 2, coordinator)
	return c, w, out, sout, done
}

// TestClusterDeathWorkerKillNoticedByItsConnection (issue 17): a node that
// runs tasks is SIGKILLed; its coordinator declares it dead because its
// connection closed, long before the 5 s heartbeat timeout, and the job
// finishes exactly once.
func TestClusterDeathWorkerKillNoticedByItsConnection(t *testing.T) {
	t.Parallel()
	c, w, out, sout, done := startDeathJob(t, "n1", n300k)
	killed := time.Now()
	c.kill("n2")
	l := w.firstLost(t, "n2")
	if l.Reason != coord.ConnectionClosed || l.By != "n1" {
		t.Errorf("n2 first declared dead by %s (%s), want by its coordinator n1 (%s)", l.By, l.Reason, coord.ConnectionClosed)
	}
	if took := l.at.Sub(killed); took > 2500*time.Millisecond {
		t.Errorf("n2 declared dead %v after its SIGKILL, want well within the 5 s heartbeat timeout", took)
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after killing n2: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n300k, k100)
}

// TestClusterDeathCoordinatorKillTakenOverAtOnce (issue 17): the
// coordinator's node is SIGKILLed; another node declares it dead because its
// connection closed and takes its lease over at once (the lease, renewed
// every 1.25 s, would not expire for another 3.75 s at least): the job runs
// again on a new coordinator well within that, and finishes exactly once.
func TestClusterDeathCoordinatorKillTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	c, w, out, sout, done := startDeathJob(t, "n3", n300k)
	killed := time.Now()
	c.kill("n3")
	l := w.firstLost(t, "n3")
	if l.Reason != coord.ConnectionClosed {
		t.Errorf("n3 first declared dead by %s for %q, want %q", l.By, l.Reason, coord.ConnectionClosed)
	}
	r := w.resumedAfter(t, killed, "n3")
	if took := r.at.Sub(killed); took > 3*time.Second {
		t.Errorf("the job ran again on %s %v after the coordinator's SIGKILL, want before its lease could expire (3.75 s)", r.coordinator, took)
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after killing the coordinator's node: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n300k, k100)
}
