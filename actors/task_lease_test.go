package actors

import (
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/plan"
)

// leaseSink counts its writes; its third write lapses the coordinator's
// lease (held), so none may follow.
type leaseSink struct {
	held   *atomic.Bool
	writes *atomic.Int64
}

func (s leaseSink) Open(plan.TaskInfo) error { return nil }
func (s leaseSink) Finish() error            { return nil }
func (s leaseSink) Close() error             { return nil }
func (s leaseSink) Write(plan.Batch) error {
	if s.writes.Add(1) == 3 {
		s.held.Store(false)
	}
	return nil
}

// TestSinkWritesNothingOnceTheLeaseLapsed: a node paused past its
// coordinator's lease resumes with its tasks running; its sink must not
// write another batch (another node's coordinator owns the output now), and
// the job is abandoned, not failed.
func TestSinkWritesNothingOnceTheLeaseLapsed(t *testing.T) {
	a, _ := clusterNode(t, startNATS(t), "a")
	var held atomic.Bool
	var writes atomic.Int64
	held.Store(true)
	b := newPlan("lease")
	src := b.source("source", 2, math.MaxInt64)
	snk := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return leaseSink{held: &held, writes: &writes}, nil })
	b.connect(src, snk, plan.Rebalance)
	opts := Options{BatchSize: 16, ChannelCapacity: 4, Cluster: &ClusterOptions{
		Place: func(*plan.Operator, int) (string, error) { return "a", nil },
		Nodes: func() []string { return []string{"a"} },
		Holds: held.Load,
	}}
	job, err := a.Submit(b.job, opts)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-job.Done():
	case <-time.After(flowDeadline):
		t.Fatal("job did not end after the lease lapsed")
	}
	if n := writes.Load(); n != 3 {
		t.Fatalf("the sink wrote %d batches, want 3: none after the lease lapsed", n)
	}
	if !errors.Is(job.Err(), ErrAbandoned) {
		t.Fatalf("job ended with %v, want it abandoned", job.Err())
	}
}
