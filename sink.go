package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// Sink consumes a stream's records in one sink instance.
type Sink[T any] interface {
	// Open prepares the instance.
	Open(info TaskInfo) error
	// Write consumes one batch (the slice is reused after Write returns).
	Write(batch []T) error
	// Finish flushes everything at the end of input.
	Finish() error
	// Close releases resources.
	Close() error
}

// TwoPhaseSink is a Sink that stages output per checkpoint and makes it visible
// only when the checkpoint completes, so committed output is exactly once.
type TwoPhaseSink[T any] interface {
	Sink[T]
	// PrepareCommit seals what was written since the previous checkpoint as
	// belonging to checkpoint id (durably) and returns state to store with it.
	PrepareCommit(id uint64) ([]byte, error)
	// Commit makes everything sealed up to checkpoint id visible. It must be
	// idempotent.
	Commit(id uint64) error
	// Recover resumes from checkpoint id: finish committing what id covers and
	// discard everything staged after it. state is empty for an instance
	// that did not run at checkpoint id (the sink grew since).
	Recover(id uint64, state []byte) error
}

// ToSink adds a sink operator; newSink makes one Sink per instance.
func ToSink[T any](s Stream[T], name string, newSink func(instance int) Sink[T], opts ...OpOption) {
	op, _ := s.g.addOperator(name, plan.KindSink, opts, s.up)
	op.New = func(instance int) (plan.Instance, error) {
		sk := newSink(instance)
		if sk == nil {
			return nil, fmt.Errorf("sink %q: no sink for instance %d", name, instance)
		}
		inst := &sinkInstance[T]{name: name, sink: sk}
		inst.twoPhase, _ = sk.(TwoPhaseSink[T])
		return inst, nil
	}
}

// sinkInstance adapts a typed Sink to the runtime.
type sinkInstance[T any] struct {
	name     string
	sink     Sink[T]
	twoPhase TwoPhaseSink[T]
}

func (s *sinkInstance[T]) Open(info plan.TaskInfo) error { return s.sink.Open(taskInfoOf(info)) }

// MaxInstances is the sink's bound on its instances, if it has one (the
// file sink runs as one instance with checkpoints).
func (s *sinkInstance[T]) MaxInstances(checkpointing bool) (int, string) {
	if b, ok := s.sink.(interface{ maxInstances(bool) (int, string) }); ok {
		return b.maxInstances(checkpointing)
	}
	return 0, ""
}
func (s *sinkInstance[T]) Close() error  { return s.sink.Close() }
func (s *sinkInstance[T]) Finish() error { return s.sink.Finish() }

// Write converts the batch to T and hands it over.
func (s *sinkInstance[T]) Write(b plan.Batch) error {
	recs, ok := plan.RecordsOf[T](b)
	if !ok {
		return fmt.Errorf("sink %q: got a batch of %T, want %T records", s.name, b, *new(T))
	}
	if err := s.sink.Write(recs); err != nil {
		return fmt.Errorf("sink %q: %w", s.name, err)
	}
	return nil
}

// SnapshotState seals the staged output of a two-phase sink.
func (s *sinkInstance[T]) SnapshotState(id uint64) (plan.Snapshot, error) {
	if s.twoPhase == nil {
		return plan.Snapshot{}, nil
	}
	st, err := s.twoPhase.PrepareCommit(id)
	if err != nil {
		return plan.Snapshot{}, fmt.Errorf("sink %q: prepare commit %d: %w", s.name, id, err)
	}
	return plan.Snapshot{CheckpointID: id, Operator: st}, nil
}

// RestoreState lets a two-phase sink finish or discard staged output.
func (s *sinkInstance[T]) RestoreState(snap plan.Snapshot) error {
	if s.twoPhase == nil {
		return nil
	}
	if err := s.twoPhase.Recover(snap.CheckpointID, snap.Operator); err != nil {
		return fmt.Errorf("sink %q: recover checkpoint %d: %w", s.name, snap.CheckpointID, err)
	}
	return nil
}

// StagesOutput reports whether the sink is two-phase: with checkpoints it
// stages its output until a checkpoint completes.
func (s *sinkInstance[T]) StagesOutput() bool { return s.twoPhase != nil }

// CommitCheckpoint makes a two-phase sink's output up to id visible.
func (s *sinkInstance[T]) CommitCheckpoint(id uint64) error {
	if s.twoPhase == nil {
		return nil
	}
	if err := s.twoPhase.Commit(id); err != nil {
		return fmt.Errorf("sink %q: commit %d: %w", s.name, id, err)
	}
	return nil
}
