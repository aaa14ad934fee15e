package actors

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
)

// closingSink is a two-phase sink that, like a JetStream sink whose
// connection Close closed, cannot commit once closed. It logs its calls.
type closingSink struct {
	mu     sync.Mutex
	log    []string
	closed bool
}

func (s *closingSink) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, what)
}

func (s *closingSink) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *closingSink) Open(plan.TaskInfo) error { return nil }
func (s *closingSink) Write(plan.Batch) error   { return nil }
func (s *closingSink) Finish() error            { s.note("finish"); return nil }

func (s *closingSink) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.note("close")
	return nil
}

func (s *closingSink) CommitCheckpoint(id uint64) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.note("commit refused: closed")
		return errors.New("connection closed")
	}
	s.note("commit")
	return nil
}

// finishedTwoPhaseSink drives a closingSink's task by hand: wired and
// started, it snapshots checkpoint id, then its input ends before id
// completes, and it reports that it finished.
func finishedTwoPhaseSink(t *testing.T, name string, id uint64) (*closingSink, func(msg any), *probe) {
	t.Helper()
	n := startNode(t)
	sink := &closingSink{}
	b := newPlan(name)
	src := b.source("src", 1, 0)
	op := b.op("sink", plan.KindSink, 1, func(int) (plan.Instance, error) { return sink, nil })
	b.connect(src, op, plan.Forward)
	j := shellJob(t, n, b.job, 64)
	task, parent, _ := spawnTaskUnder(t, j, op, nil)
	send := func(msg any) { n.system.Root.Send(task, msg) }
	send(&wireMsg{})
	send(&startMsg{})
	send(&barrierOvertakeMsg{input: 0, id: id, lastSeq: 0})
	next[*taskAckMsg](t, parent, fmt.Sprintf("the acknowledgement of checkpoint %d", id))
	send(&deliverEOSMsg{input: 0})
	next[*taskFinishedMsg](t, parent, "the sink finished")
	return sink, send, parent
}

// TestTwoPhaseSinkCommitsBeforeClosing: the end of input reaches a
// two-phase sink before the completion of the final checkpoint it
// snapshotted (in a cluster the two travel on different subjects). The sink
// finishes but is closed only after it committed that checkpoint. Before,
// it was closed at once and its commit failed ("publish to jsout.counts:
// nats: connection closed"), failing the job after its final checkpoint.
func TestTwoPhaseSinkCommitsBeforeClosing(t *testing.T) {
	sink, send, parent := finishedTwoPhaseSink(t, "sink-close-order", 5)
	if got := sink.calls(); !slices.Equal(got, []string{"finish"}) {
		t.Fatalf("after the end of input, before checkpoint 5 completed: calls %v, want [finish] (not closed yet)", got)
	}
	send(&checkpointDoneMsg{id: 5})
	if m := next[*sinkCommittedMsg](t, parent, "the sink's commit of checkpoint 5"); m.id != 5 {
		t.Fatalf("sink committed checkpoint %d, want 5", m.id)
	}
	if got := sink.calls(); !slices.Equal(got, []string{"finish", "commit", "close"}) {
		t.Fatalf("calls %v, want [finish commit close]", got)
	}
}

// TestTwoPhaseSinkClosesWhenItsCheckpointAborts: a finished sink whose
// snapshotted checkpoint aborts has nothing left to commit: it closes then.
func TestTwoPhaseSinkClosesWhenItsCheckpointAborts(t *testing.T) {
	sink, send, _ := finishedTwoPhaseSink(t, "sink-close-abort", 7)
	send(&checkpointAbortMsg{id: 7})
	if !poll.Until(shellDeadline, time.Millisecond, func() bool { return slices.Equal(sink.calls(), []string{"finish", "close"}) }) {
		t.Fatalf("after checkpoint 7 aborted: calls %v, want [finish close]", sink.calls())
	}
}
