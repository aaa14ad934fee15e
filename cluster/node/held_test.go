package node

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
)

// TestAgentReportsLocalStateAndReconcilesAtStart: a node running keycount
// reports, in the heartbeats another node receives, the key groups and
// bytes of its local copy per operator and checkpoint. Started again with
// the same id and workdir after the job ended, it deletes the ended job's
// local state before running anything and reports nothing held. Started
// with that workdir under another id, it refuses: it adopts nothing.
func TestAgentReportsLocalStateAndReconcilesAtStart(t *testing.T) {
	s := startNATS(t)
	const timeout = agentTestHeartbeat
	workdir := t.TempDir()
	a := startAgentIn(t, connect(t, s), "a", workdir, 8, timeout)
	b := startAgentIn(t, connect(t, s), "b", t.TempDir(), 1, timeout)
	out := filepath.Join(t.TempDir(), "counts.jsonl")
	if _, err := a.Submit("keycount", []string{"--records=200000", "--keys=5000", "--parallelism=2", "--sleep-ms=0.005", "--out=" + out}); err != nil {
		t.Fatal(err)
	}
	var seen cluster.Heartbeat
	heldByA := func() bool {
		for _, hb := range b.alive() {
			if hb.Node == "a" {
				seen = hb
			}
		}
		groups, bytes := 0, int64(0)
		for _, h := range seen.Held {
			if h.Job == "keycount" && h.Operator == "count" {
				groups, bytes = 0, h.KeyGroupBytes
				for _, r := range h.KeyGroups {
					groups += r[1] - r[0] + 1
				}
			}
		}
		return groups >= 32 && bytes > 0
	}
	if !poll.Until(60*time.Second, 20*time.Millisecond, heldByA) {
		t.Fatalf("node b never heard node a hold at least 32 key groups (one instance of 2) of operator count: %+v", seen.Held)
	}
	ended := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rec, _, err := a.jobs.Get(ctx, "keycount")
		return err == nil && rec.State != cluster.JobRunning
	}
	if !poll.Until(60*time.Second, 20*time.Millisecond, ended) {
		t.Fatal("job did not end")
	}
	// Only a finished job's state goes: a failed one's stays to restore from.
	if rec, _, err := a.jobs.Get(context.Background(), "keycount"); err != nil || rec.State != cluster.JobFinished {
		t.Fatalf("job record %+v (%v), want it finished", rec, err)
	}
	a.Shutdown()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Start(ctx, Config{ID: "c", Workdir: workdir, Slots: 1, HeartbeatTimeout: timeout, Jobs: testJobs, Log: zerolog.Nop()}, connect(t, s))
	if err == nil || !strings.Contains(err.Error(), `belongs to node "a"`) {
		t.Fatalf("node c started on node a's workdir: err %v, want it refused", err)
	}
	again := startAgentIn(t, connect(t, s), "a", workdir, 8, timeout)
	if hb := again.heartbeat(); len(hb.Held) != 0 {
		t.Fatalf("after the job ended, the restarted node still holds %+v", hb.Held)
	}
}

// startAgentIn starts an agent named id with workdir over nc, shut down
// when the test ends.
func startAgentIn(t *testing.T, nc *nats.Conn, id, workdir string, slots int, heartbeatTimeout time.Duration) *Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := Start(ctx, Config{ID: id, Workdir: workdir, Slots: slots, HeartbeatTimeout: heartbeatTimeout,
		PlacementTimeout: 10 * time.Second, Jobs: testJobs, Log: zerolog.Nop()}, nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Shutdown)
	return a
}
