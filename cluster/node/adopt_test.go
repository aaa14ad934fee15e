package node

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
)

// TestAgentDoesNotAdoptAJobThatEndedAfterTheListing attacks the window
// between listing the job registry and winning a job's lease: the listing
// shows the job running, but its coordinator has since recorded its end and
// released the lease. The agent wins the lease, yet must not restart the
// job from its latest checkpoint (a cancelled job that came back to life
// seen in a two-node cluster test); it gives the lease up and leaves the
// record as it is.
func TestAgentDoesNotAdoptAJobThatEndedAfterTheListing(t *testing.T) {
	nc, a := coordinateUnboundedKeycount(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	checkpointed := func() bool {
		st := a.Status(time.Now())
		return len(st.Jobs) == 1 && len(st.Jobs[0].Checkpoints) >= 1
	}
	if !poll.Until(60*time.Second, 10*time.Millisecond, checkpointed) {
		t.Fatalf("no checkpoint of the unbounded job: %+v", a.Status(time.Now()))
	}
	running, _, err := a.jobs.Get(ctx, "keycount")
	if err != nil || running.State != cluster.JobRunning {
		t.Fatalf("record of the running job: %+v (%v)", running, err)
	}
	if _, err := nc.RequestWithContext(ctx, CancelSubject, Encode(CancelRequest{Job: "keycount"})); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	// Ended means recorded as cancelled and its lease released: the
	// coordinator releases the lease after it recorded the end, and a lease
	// still held (not expired) is not for the agent to win.
	var rec cluster.JobRecord
	var lease cluster.LeaseValue
	ended := func() bool {
		rec, _, err = a.jobs.Get(ctx, "keycount")
		if err != nil || rec.State != cluster.JobCancelled || len(a.coordJobs()) != 0 {
			return false
		}
		lease, _, err = a.leases.Get(ctx, "keycount")
		return err == nil && lease.Node == ""
	}
	if !poll.Until(60*time.Second, 10*time.Millisecond, ended) {
		t.Fatalf("job not cancelled with its lease released: %+v, lease %+v (%v), coordinating %d", rec, lease, err, len(a.coordJobs()))
	}

	// The stale listing: the job as it was before it ended.
	a.adopt(running, "")

	if n := len(a.coordJobs()); n != 0 {
		t.Fatalf("the agent coordinates %d job(s) after adopting a stale record of a cancelled job", n)
	}
	after, _, err := a.jobs.Get(ctx, "keycount")
	if err != nil || after.State != cluster.JobCancelled {
		t.Fatalf("record after the stale adoption: %+v (%v), want it still cancelled", after, err)
	}
	// The lease won for the attempt was given up again: another node can
	// take it at once, at a larger epoch.
	now, _, err := a.leases.Get(ctx, "keycount")
	if err != nil || now.Node != "" || now.Epoch <= lease.Epoch {
		t.Fatalf("lease after the stale adoption: %+v (%v), before %+v: want released at a larger epoch", now, err, lease)
	}
}

// TestAgentRecoordinatesAJobAtANewEpoch attacks a new coordinator of a job
// on the node whose earlier coordinator of the same name has not released
// its lease yet (it abandoned the job, as a coordinator paused past its
// lease does, and the registry still shows the job running here). The new
// coordinator must stamp a larger epoch than the old one: at the same
// epoch, the fence could not tell the old coordinator's late messages, or
// those of the parts it started, from the new one's. Before, the node
// renewed its own live lease and kept the epoch.
func TestAgentRecoordinatesAJobAtANewEpoch(t *testing.T) {
	nc, a := coordinateUnboundedKeycount(t)
	jobs := a.coordJobs()
	if len(jobs) != 1 {
		t.Fatalf("coordinating %d jobs after the submission, want 1", len(jobs))
	}
	old := jobs[0]
	t.Cleanup(func() { _, _ = nc.Request(CancelSubject, Encode(CancelRequest{Job: "keycount"}), 10*time.Second) })

	old.job.Abandon("test: the coordinator stops acting, its lease not released")
	var again *coordJob
	recoordinated := func() bool {
		for _, cj := range a.coordJobs() {
			if cj != old {
				again = cj
				return true
			}
		}
		return false
	}
	if !poll.Until(60*time.Second, 10*time.Millisecond, recoordinated) {
		t.Fatalf("the node did not coordinate the job again after its coordinator abandoned it: %+v", a.Status(time.Now()))
	}
	if again.epoch <= old.epoch {
		t.Fatalf("the new coordinator's epoch is %d, the abandoned one's %d: want a larger epoch", again.epoch, old.epoch)
	}
	if ok, highest := a.fence.Admit("keycount", old.epoch); ok {
		t.Fatalf("a message of the abandoned coordinator's epoch %d is admitted (highest seen %d)", old.epoch, highest)
	}
}

// coordinateUnboundedKeycount starts one agent, "a", on its own NATS server
// and submits an unbounded keycount job to it.
func coordinateUnboundedKeycount(t *testing.T) (*nats.Conn, *Agent) {
	t.Helper()
	s := startNATS(t)
	nc := connect(t, s)
	a := startAgent(t, nc, "a", 8, agentTestHeartbeat)
	if !poll.Until(20*time.Second, 10*time.Millisecond, func() bool { return len(a.alive()) == 1 }) {
		t.Fatal("agent a does not see itself")
	}
	if _, err := a.Submit("keycount", []string{"--records=-1", "--keys=10", "--parallelism=2", "--sleep-ms=0.05"}); err != nil {
		t.Fatal(err)
	}
	return nc, a
}
