package node

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
)

// TestTwoAgentsRunAJob: two agents started from Go in one process on an
// embedded nats-server run a submitted keycount job to the end. Node a has
// 3 slots for the job's 5 tasks, so node b runs a part of it.
func TestTwoAgentsRunAJob(t *testing.T) {
	s := startNATS(t)
	const timeout = agentTestHeartbeat
	a := startAgent(t, connect(t, s), "a", 3, timeout)
	b := startAgent(t, connect(t, s), "b", 3, timeout)
	for _, ag := range []*Agent{a, b} {
		if !poll.Until(20*time.Second, 10*time.Millisecond, func() bool { return ag.isAlive("a") && ag.isAlive("b") }) {
			t.Fatalf("node %s does not see both nodes: %v", ag.ID(), ag.alive())
		}
	}
	out := filepath.Join(t.TempDir(), "counts.jsonl")
	const records, keys = 20000, 10
	coordinator, err := a.Submit("keycount", []string{"--records=20000", "--keys=10", "--parallelism=2", "--out=" + out})
	if err != nil {
		t.Fatal(err)
	}
	if coordinator != "a" {
		t.Fatalf("coordinator %q, want a", coordinator)
	}
	var rec cluster.JobRecord
	ended := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rec, _, err = a.jobs.Get(ctx, "keycount")
		return err == nil && rec.State != cluster.JobRunning
	}
	if !poll.Until(60*time.Second, 20*time.Millisecond, ended) {
		t.Fatalf("job did not end: %+v (%v)", rec, err)
	}
	if rec.State != cluster.JobFinished || rec.Coordinator != "a" {
		t.Fatalf("job record %+v, want finished by coordinator a", rec)
	}
	if err := keycount.VerifyFile(out, records, keys); err != nil {
		t.Fatalf("output: %v", err)
	}
	// A job that does not build is refused with the builder's error.
	if _, err := b.Submit("nosuch", nil); err == nil {
		t.Fatal("an unknown job was accepted")
	}
}

// TestAgentTakesOverFromAStoppedCoordinator: the coordinator's agent stops
// abruptly (Shutdown without Leave: no heartbeats, no lease renewals) after
// the job's first checkpoints; another agent declares it dead, wins the
// job's lease, restores the latest checkpoint on the live nodes (their
// status shows the restores, as the job counted them), and the job finishes
// exactly once.
func TestAgentTakesOverFromAStoppedCoordinator(t *testing.T) {
	s := startNATS(t)
	const timeout = agentTestHeartbeat
	agents := map[string]*Agent{}
	for _, id := range []string{"a", "b", "c"} {
		agents[id] = startAgent(t, connect(t, s), id, 4, timeout)
	}
	for _, ag := range agents {
		if !poll.Until(20*time.Second, 10*time.Millisecond, func() bool { return len(ag.alive()) == 3 }) {
			t.Fatalf("node %s does not see all nodes: %v", ag.ID(), ag.alive())
		}
	}
	out := filepath.Join(t.TempDir(), "counts.jsonl")
	const records, keys = 200000, 10
	if _, err := agents["a"].Submit("keycount", []string{"--records=200000", "--keys=10", "--parallelism=2", "--sleep-ms=0.05", "--out=" + out}); err != nil {
		t.Fatal(err)
	}
	checkpointed := func() bool {
		st := agents["a"].Status(time.Now())
		return len(st.Jobs) == 1 && len(st.Jobs[0].Checkpoints) >= 2
	}
	if !poll.Until(60*time.Second, 10*time.Millisecond, checkpointed) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rec, _, err := agents["a"].jobs.Get(ctx, "keycount")
		t.Fatalf("no two checkpoints on coordinator a: %+v; job record %+v (%v)", agents["a"].Status(time.Now()), rec, err)
	}
	agents["a"].Shutdown()
	// The restores after the takeover show in the live nodes' status (and
	// heartbeats) while the job runs, with the bytes the job read.
	var restored []cluster.RestoredState
	restoresShown := func() bool {
		restored = nil
		for _, id := range []string{"b", "c"} {
			if r, ok := agents[id].shownRestores("keycount"); ok {
				restored = append(restored, r)
			}
		}
		var read int64
		for _, r := range restored {
			read += r.LocalBytes + r.RemoteBytes
		}
		return read > 0
	}
	if !poll.Until(60*time.Second, 5*time.Millisecond, restoresShown) {
		t.Fatal("no live node's status shows restores of the job after the takeover")
	}
	t.Logf("restores shown in status: %+v", restored)
	for _, r := range restored {
		if r.Restores <= 0 || (r.LocalBytes+r.RemoteBytes > 0) != (r.LocalSections+r.RemoteSections > 0) || r.TookMs <= 0 {
			t.Fatalf("restore summary %+v: want task restores, with sections read for bytes read, and their time", r)
		}
	}
	var rec cluster.JobRecord
	var err error
	ended := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rec, _, err = agents["b"].jobs.Get(ctx, "keycount")
		return err == nil && rec.State != cluster.JobRunning
	}
	if !poll.Until(120*time.Second, 20*time.Millisecond, ended) {
		t.Fatalf("job did not end after its coordinator stopped: %+v (%v)", rec, err)
	}
	if rec.State != cluster.JobFinished || (rec.Coordinator != "b" && rec.Coordinator != "c") {
		t.Fatalf("job record %+v, want finished by b or c", rec)
	}
	if err := keycount.VerifyFile(out, records, keys); err != nil {
		t.Fatalf("output: %v", err)
	}
}

// shownRestores is the restore summary of job in a's status, when a's
// heartbeat carries one and it equals the job's own restore figures on a
// (summed over its part and coordinated job there).
func (a *Agent) shownRestores(job string) (cluster.RestoredState, bool) {
	find := func() (cluster.RestoredState, bool) {
		hb := a.heartbeat()
		st := a.Status(time.Now())
		for i, r := range st.Restored {
			if r.Job == job && len(hb.Restored) > i && hb.Restored[i] == r {
				return r, true
			}
		}
		return cluster.RestoredState{}, false
	}
	before, ok := find()
	if !ok {
		return before, false
	}
	a.mu.Lock()
	var want cluster.RestoredState
	var took, decoded time.Duration
	var first, last, lastDecoded time.Time
	add := func(s actors.RestoreStats) {
		took, decoded = took+s.Took, decoded+s.Decoded
		want.Decoded += s.DecodedRestores
		if s.LastDecoded.After(lastDecoded) {
			lastDecoded = s.LastDecoded
		}
		if s.Restores > 0 {
			if first.IsZero() || s.First.Before(first) {
				first = s.First
			}
			if s.Last.After(last) {
				last = s.Last
			}
		}
		want.Restores += s.Restores
		want.LocalBytes += s.Read.LocalBytes
		want.RemoteBytes += s.Read.RemoteBytes
		want.LocalSections += s.Read.LocalSections
		want.RemoteSections += s.Read.RemoteSections
	}
	if j := a.parts[job]; j != nil {
		add(j.Restores())
	}
	if cj := a.coord[job]; cj != nil {
		add(cj.job.Restores())
	}
	a.mu.Unlock()
	after, ok := find()
	if !ok || after != before {
		return after, false // restores in between: ask again
	}
	want.Job, want.TookMs = job, float64(took)/float64(time.Millisecond)
	want.SpanMs = float64(last.Sub(first)) / float64(time.Millisecond)
	want.DecodedMs = float64(decoded) / float64(time.Millisecond)
	if !lastDecoded.IsZero() {
		want.DecodedSpanMs = float64(lastDecoded.Sub(first)) / float64(time.Millisecond)
	}
	return after, want == after
}
