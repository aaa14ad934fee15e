package plan

import "github.com/weirstream/weir/keygroups"

// TaskInfo tells an operator instance who it is.
type TaskInfo struct {
	Job            string
	Operator       string
	Instance       int
	Parallelism    int
	MaxParallelism int
	// KeyGroups lists the key groups this instance owns (keyed operators only).
	KeyGroups []int
	// Table is the operator's key-group table (operators that need one only);
	// it is read, never changed.
	Table *keygroups.Table
	// Checkpointing is true when the job takes checkpoints (sinks then stage
	// output and make it visible only for completed checkpoints).
	Checkpointing bool
	// Restoring is true when the task resumes from a checkpoint (RestoreState
	// follows Open).
	Restoring bool
}

// InstanceBound is implemented by an instance whose operator runs with at
// most a number of instances: MaxInstances returns it (0: any number) and
// why, as a phrase for an error.
type InstanceBound interface {
	MaxInstances(checkpointing bool) (int, string)
}

// Instance is the runtime side of one task of an operator. Concrete instances also
// implement Source, Transform or Sink, and may implement Stateful.
type Instance interface {
	// Open prepares the instance before the first record.
	Open(info TaskInfo) error
	// Close releases resources; it is called once, also after failures.
	Close() error
}

// Source reads records from a replayable input.
type Source interface {
	Instance
	// Read emits up to max records into out; done reports the end of a bounded input.
	Read(max int, out Output) (n int, done bool, err error)
	// Offset is the position of the next record to read.
	Offset() int64
	// SeekTo moves the source to an offset taken from a checkpoint.
	SeekTo(offset int64) error
}

// Transform processes batches of records.
type Transform interface {
	Instance
	// Process handles one input batch.
	Process(input int, recs Batch, out Output) error
	// Finish is called once when every input has ended.
	Finish(out Output) error
}

// Sink consumes records. Sinks that make output visible only for completed
// checkpoints implement TwoPhaseSink.
type Sink interface {
	Instance
	// Write consumes one batch.
	Write(recs Batch) error
	// Finish flushes everything at the end of input.
	Finish() error
}

// Snapshot is the state of one operator instance at a checkpoint.
type Snapshot struct {
	// CheckpointID is the checkpoint the state belongs to.
	CheckpointID uint64
	// KeyGroups maps key group → encoded state of that group (keyed operators).
	KeyGroups map[int][]byte
	// KeyGroupCRCs maps key group → CRC-32C of its KeyGroups bytes: on
	// restore, for the groups whose bytes were verified against it when
	// read; from a snapshot, for the groups whose encoder computed it, so
	// the task does not read them again to checksum their sections (nil:
	// none).
	KeyGroupCRCs map[int]uint32
	// KeyGroupsAdopted says the KeyGroups bytes are handed over on restore:
	// each in a buffer of its own that no one else changes or reuses, so
	// the restored state may point into them instead of copying.
	KeyGroupsAdopted bool
	// Operator is non-keyed operator state (may be nil).
	Operator []byte
	// Deltas are the key groups whose KeyGroups bytes are a delta on their
	// state at checkpoint DeltaSince (IncrementalPending), not the whole
	// group.
	Deltas     map[int]bool
	DeltaSince uint64
	// Sections is, for a snapshot AppendingPending wrote into a buffer,
	// where each key group's blob lies in it: [offset, size].
	Sections map[int][2]int64
	// Entries is, for an incremental snapshot, each key group's count of
	// entries in its blob (keys with a value and tombstones) and of keys
	// it held at the barrier: a task compacts a chain of deltas by what
	// they overwrote (nil, or a group missing: not known).
	Entries map[int]GroupEntries
}

// GroupEntries counts one key group's entries in a snapshot's blob and the
// keys the group held at the barrier.
type GroupEntries struct {
	Written int
	Live    int
}

// Stateful operators can be snapshotted and restored.
type Stateful interface {
	// SnapshotState captures the instance's state for checkpoint id.
	SnapshotState(id uint64) (Snapshot, error)
	// RestoreState loads state captured by SnapshotState (only the key groups this
	// instance now owns are passed). A restore may call it several times, each
	// with other key groups, and then once with the operator state and no key
	// groups; the bytes given are only valid during the call unless
	// KeyGroupsAdopted says they are the instance's to keep.
	RestoreState(s Snapshot) error
}

// OutputStager is a sink that says whether it stages its output per
// checkpoint (commits it only when the checkpoint completes): a live
// rescale may add instances of such a sink, and remove some only if it
// hands its staged output off (StagedHandoff).
type OutputStager interface {
	StagesOutput() bool
}

// StagedHandoff is a two-phase sink whose staged output another instance
// can commit: a live rescale may remove its instances (each hands what it
// staged to a remaining one), and a checkpoint restores at fewer instances
// (a remaining one recovers each removed instance's state).
type StagedHandoff interface {
	// HandsOff reports whether the sink can hand its staged output off.
	HandsOff() bool
	// HandOffStaged returns everything the instance staged and has not
	// committed, and keeps none of it.
	HandOffStaged() ([]byte, error)
	// TakeOverStaged adopts what a removed instance handed off: it is
	// committed with the instance's own output.
	TakeOverStaged(state []byte) error
	// RecoverHandedOff resumes a removed instance's state of checkpoint id:
	// commits what id covers, discards the rest.
	RecoverHandedOff(id uint64, state []byte) error
}

// TwoPhaseSink stages output per checkpoint and makes it visible on completion.
type TwoPhaseSink interface {
	Sink
	// CommitCheckpoint makes everything staged up to checkpoint id visible. It must be
	// idempotent: it may be called again for the same id after a restore.
	CommitCheckpoint(id uint64) error
}
