package node

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
)

// TestAgentEndsACancelledJobItTakesOver attacks a cancel whose coordinator
// stops acting after accepting it and before recording the job's end (it
// died, or its lease lapsed while the job stopped): the cancel was held only
// in that coordinator's memory, so the node that won the lease next ran the
// job again from its latest checkpoint (seen: a job still running 86 s after
// `node cancel`). The accepted cancel is in the job's record; the node that
// takes the job over records it cancelled and gives the lease up.
func TestAgentEndsACancelledJobItTakesOver(t *testing.T) {
	nc, a := coordinateUnboundedKeycount(t)
	t.Cleanup(func() { _, _ = nc.Request(CancelSubject, Encode(CancelRequest{Job: "keycount"}), 10*time.Second) })
	jobs := a.coordJobs()
	if len(jobs) != 1 {
		t.Fatalf("coordinating %d jobs after the submission, want 1", len(jobs))
	}
	old := jobs[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// What onCancel does before it stops the job; then the coordinator
	// stops acting without recording the end.
	if err := a.recordCancel(ctx, "keycount"); err != nil {
		t.Fatalf("record the cancel: %v", err)
	}
	old.job.Abandon("test: the coordinator stops acting after accepting a cancel")

	var rec cluster.JobRecord
	var err error
	recorded := func() bool {
		for _, cj := range a.coordJobs() {
			if cj != old {
				t.Fatalf("the node coordinates the cancelled job again (epoch %d)", cj.epoch)
			}
		}
		rec, _, err = a.jobs.Get(ctx, "keycount")
		return err == nil && rec.State == cluster.JobCancelled
	}
	if !poll.Until(60*time.Second, 10*time.Millisecond, recorded) {
		t.Fatalf("the cancelled job's end was never recorded: %+v (%v)", rec, err)
	}
	if rec.Coordinator != "a" || !rec.CancelRequested {
		t.Fatalf("record after the takeover: %+v, want cancelled by a with the request kept", rec)
	}
	// endCancelled records the end, then releases the lease: the record can
	// be read between the two.
	var lease cluster.LeaseValue
	released := func() bool {
		lease, _, err = a.leases.Get(ctx, "keycount")
		return err == nil && lease.Node == ""
	}
	if !poll.Until(30*time.Second, 10*time.Millisecond, released) {
		t.Fatalf("lease after the cancelled job's end: %+v (%v), want released", lease, err)
	}
}

// TestRecordCancelOnlyMarksARunningJob checks the registry side of a
// cancel: a running job's record gains the request (kept by later updates
// of the record), an ended job's record is left as it is. The agent holds
// the registry only: a running agent would take the running job over (no
// lease is held for it) and, seeing the cancel, record it cancelled before
// the test reads it (seen once in CI).
func TestRecordCancelOnlyMarksARunningJob(t *testing.T) {
	s := startNATS(t)
	nc := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := cluster.OpenJobs(ctx, js, cluster.DefaultJobBucket)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{jobs: jobs}
	for _, st := range []string{cluster.JobRunning, cluster.JobFinished} {
		name := "j-" + st
		if _, err := a.jobs.Put(ctx, cluster.JobRecord{Name: name, State: st, Coordinator: "a", Restarts: 2}); err != nil {
			t.Fatal(err)
		}
		if err := a.recordCancel(ctx, name); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		rec, _, err := a.jobs.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if want := st == cluster.JobRunning; rec.CancelRequested != want || rec.State != st || rec.Restarts != 2 {
			t.Fatalf("%s job after recordCancel: %+v, want cancel requested %v and the rest unchanged", st, rec, want)
		}
	}
	if err := a.recordCancel(ctx, "nosuchjob"); err == nil {
		t.Fatal("recordCancel of an unknown job: nil error")
	}
}
