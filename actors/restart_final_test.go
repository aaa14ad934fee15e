package actors

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/supervision"
)

// coordinatorView is the coordinator's part of a dump (nil if it did not
// answer in time); it does not wait for tasks that are blocked.
func coordinatorView(j *Job) *CoordinatorDump {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	d, err := j.Dump(ctx)
	if err != nil || d == nil {
		return nil
	}
	return d.Coordinator
}

// A source that is killed from outside (Stop or Poison: its actor is gone
// before the job handles the failure) while the final checkpoint is in
// flight. Its region restarts and reads the input again, so the final
// checkpoint must be asked for anew once it is idle again, and nothing may be
// triggered while the region is down (the barrier would reach no source).
// Before the fix the job kept the dead source's idle report and retried the
// final checkpoint at once into the stopped region: it waited for the
// checkpoint timeout (an hour here) before finishing.
func TestKilledIdleSourceDoesNotStallTheFinalCheckpoint(t *testing.T) {
	const records = 8
	n := startNode(t)
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(records)
	rec.gate = make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(rec.gate) }) }
	t.Cleanup(release)

	b := newPlan("killed-idle-source")
	src := b.source("src", 1, records)
	sink := b.op("sink", plan.KindSink, 1, func(instance int) (plan.Instance, error) {
		return &recordingSink{rec: rec, instance: instance, srcP: 1, failAt: -1}, nil
	})
	b.connect(src, sink, plan.Forward)
	opts := Options{BatchSize: 1, ChannelCapacity: 2 * records, DeliveryWindow: 1,
		// No interval checkpoint and no timeout within the test: only the
		// final checkpoint is taken, and a lost one never ends by itself.
		Checkpoint:  CheckpointOptions{Mode: barriers.Unaligned, Interval: time.Hour, Timeout: time.Hour, Retain: 2, Store: st},
		Supervision: DefaultSupervisionOptions()}
	j, err := n.Submit(b.job, opts)
	if err != nil {
		t.Fatal(err)
	}

	// The sink blocks in its first Write, so the source reads all its input
	// into the channel, goes idle and the final checkpoint stays in flight:
	// the source acknowledged it, the blocked sink cannot.
	var view *CoordinatorDump
	if !poll.Until(shellDeadline, 5*time.Millisecond, func() bool {
		view = coordinatorView(j)
		return view != nil && view.IdleSources == 1 && view.PendingCheckpoint != 0 && view.Acks == 1
	}) {
		t.Fatalf("the final checkpoint was not in flight with the source idle within %v: %+v", shellDeadline, view)
	}
	j.mu.Lock()
	srcPID := actor.NewPID(j.pid.Address, j.pid.Id+"/src-0")
	j.mu.Unlock()
	n.system.Root.Stop(srcPID)
	// The job handles the failure while the sink is still blocked (so the
	// final checkpoint cannot complete first); the region restarts once the
	// released sink has stopped.
	if !poll.Until(shellDeadline, 5*time.Millisecond, func() bool {
		view = coordinatorView(j)
		return view != nil && len(view.Regions) == 1 && view.Regions[0].State != supervision.Running.String()
	}) {
		t.Fatalf("the job did not stop the source's region within %v: %+v", shellDeadline, view)
	}
	release()

	if err := waitJob(t, j); err != nil {
		t.Fatalf("job: %v", err)
	}
	if s := j.Supervision(); s.Restarts != 1 {
		t.Errorf("restarts %d, want 1", s.Restarts)
	}
	cps := j.Checkpoints()
	if len(cps) == 0 || !cps[len(cps)-1].Final {
		t.Fatalf("completed checkpoints %+v, want the last one final", cps)
	}
	// The final checkpoint covers the whole input: the restarted source is at
	// its end, not where it was when it was respawned.
	m, err := st.Manifest(context.Background(), b.job.Name, cps[len(cps)-1].ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range m.Tasks {
		if ts.Operator == src.Name && ts.SourceOffset != records {
			t.Errorf("final checkpoint %d has the source at offset %d, want %d (end of input)", m.CheckpointID, ts.SourceOffset, records)
		}
	}
}
