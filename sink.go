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
	// that did not run at checkpoint id (the sink grew since). At fewer
	// instances than at id, a HandOffSink's instances also recover the
	// removed instances' state (RecoverRemoved); other sinks refuse to restore.
	Recover(id uint64, state []byte) error
}

// HandOffSink is a TwoPhaseSink whose staged output any instance can
// commit, as Flink's two-phase sinks carry their pending transactions in
// state for whichever instance restores them. With checkpoints, a live
// rescale may then remove instances, and a checkpoint restores at fewer
// instances: removed instance r's output goes to instance r mod the new
// parallelism. A sink that is only a TwoPhaseSink can grow, not shrink.
//
// Commit and Recover must recognise a transaction by its own identity,
// carried in the state, not by the instance that commits it: the same
// transaction may be committed by the instance that took it over and, after
// a failure, recovered from the removed instance's checkpoint state.
type HandOffSink[T any] interface {
	TwoPhaseSink[T]
	// HandOff is called on an instance a live rescale removes, once it has
	// written its last record: it returns everything it staged and has not
	// committed (sealed for checkpoints not yet committed, and written
	// since the last checkpoint), and keeps none of it.
	HandOff() ([]byte, error)
	// TakeOver adopts what a removed instance handed off: what was sealed is
	// committed at this instance's next Commit, what was written since the
	// last checkpoint is sealed at its next PrepareCommit; from then on it is
	// in this instance's checkpoint state until committed.
	TakeOver(state []byte) error
	// RecoverRemoved is Recover for the state of checkpoint id of an
	// instance that a restore at fewer instances removed: commit what id
	// covers, discard what that instance staged after it. It follows this
	// instance's own Recover.
	RecoverRemoved(id uint64, state []byte) error
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
		inst.handOff, _ = sk.(HandOffSink[T])
		return inst, nil
	}
}

// sinkInstance adapts a typed Sink to the runtime.
type sinkInstance[T any] struct {
	name     string
	sink     Sink[T]
	twoPhase TwoPhaseSink[T]
	handOff  HandOffSink[T]
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

// HandsOff reports whether the sink can hand its staged output to another
// instance (HandOffSink).
func (s *sinkInstance[T]) HandsOff() bool { return s.handOff != nil }

// HandOffStaged is HandOff of a removed instance.
func (s *sinkInstance[T]) HandOffStaged() ([]byte, error) {
	if s.handOff == nil {
		return nil, fmt.Errorf("sink %q cannot hand its staged output off", s.name)
	}
	st, err := s.handOff.HandOff()
	if err != nil {
		return nil, fmt.Errorf("sink %q: hand off: %w", s.name, err)
	}
	return st, nil
}

// TakeOverStaged is TakeOver of what a removed instance handed off.
func (s *sinkInstance[T]) TakeOverStaged(state []byte) error {
	if s.handOff == nil {
		return fmt.Errorf("sink %q cannot take over staged output", s.name)
	}
	if err := s.handOff.TakeOver(state); err != nil {
		return fmt.Errorf("sink %q: take over: %w", s.name, err)
	}
	return nil
}

// RecoverHandedOff is RecoverRemoved of a removed instance's checkpoint state.
func (s *sinkInstance[T]) RecoverHandedOff(id uint64, state []byte) error {
	if s.handOff == nil {
		return fmt.Errorf("sink %q cannot recover another instance's checkpoint %d", s.name, id)
	}
	if err := s.handOff.RecoverRemoved(id, state); err != nil {
		return fmt.Errorf("sink %q: recover a removed instance's checkpoint %d: %w", s.name, id, err)
	}
	return nil
}
