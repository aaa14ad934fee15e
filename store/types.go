package store

import "context"

// BlobRef names a stored blob and how to verify it.
//
// A ref may name a section of a larger blob (Whole > 0): the bytes
// [Offset, Offset+Size) of an object of Whole bytes. A task writes all its key
// groups as sections of one blob, so a checkpoint costs one fsync per task while
// any subset of key groups can still be loaded and verified on its own.
type BlobRef struct {
	Name   string `msgpack:"name"` // e.g. "op-count/3/kg-17" (store-relative, per checkpoint)
	Size   int64  `msgpack:"size"`
	CRC32C uint32 `msgpack:"crc"` // Castagnoli, of the Size bytes this ref names
	Offset int64  `msgpack:"off,omitempty"`
	Whole  int64  `msgpack:"whole,omitempty"` // size of the whole object when this is a section
}

// Section returns the ref of bytes [off, off+len(part)) of the blob whole.
func Section(whole BlobRef, off int64, part []byte) BlobRef {
	return SectionSummed(whole, off, int64(len(part)), Checksum(part))
}

// SectionSummed is Section for the size bytes at off whose CRC-32C the
// caller computed already.
func SectionSummed(whole BlobRef, off, size int64, crc uint32) BlobRef {
	return BlobRef{Name: whole.Name, Size: size, CRC32C: crc, Offset: off, Whole: whole.Size}
}

// ChannelBlob is the captured in-flight data of one input channel of a task.
type ChannelBlob struct {
	Input   int     `msgpack:"input"` // input channel index at the consumer task
	Blob    BlobRef `msgpack:"blob"`
	Buffers int     `msgpack:"buffers"`
	Records int     `msgpack:"records"`
	// Rounds splits the Buffers, in order, into replay rounds; empty means
	// one round of them all, labelled with the manifest's checkpoint.
	Rounds []ChannelRound `msgpack:"rounds,omitempty"`
	// Parts, when set, is the channel's state as runs of consecutive
	// buffers, in order, each a section of the blob of the checkpoint that
	// wrote it: this one, or an earlier one that captured the same buffers
	// while they were queued (channel_parts.go). Blob is then the section
	// of this checkpoint's blob holding the buffers it wrote itself (none:
	// a zero ref).
	Parts []ChannelPart `msgpack:"parts,omitempty"`
}

// ChannelRound is a run of Buffers consecutive buffers of a channel's state
// that first became channel state in checkpoint Checkpoint. A checkpoint
// taken while restored channel state is still being replayed keeps that
// rest under its older label; on restore every consumer replays its
// channels round by round, oldest label first, before any new input.
type ChannelRound struct {
	Checkpoint uint64 `msgpack:"checkpoint"`
	Buffers    int    `msgpack:"buffers"`
}

// TaskSnapshot is one task instance's part of a checkpoint.
type TaskSnapshot struct {
	Operator  string          `msgpack:"operator"`
	Instance  int             `msgpack:"instance"`
	KeyGroups map[int]BlobRef `msgpack:"key_groups,omitempty"`
	// KeyGroupChains holds the key groups stored incrementally: a whole
	// section then the deltas on it, to restore in order, each a section of
	// the blob of the checkpoint that wrote it (this one or an earlier).
	// A group is in KeyGroups or here, never both.
	KeyGroupChains map[int][]ChainLink `msgpack:"key_group_chains,omitempty"`
	OperatorState  *BlobRef            `msgpack:"operator_state,omitempty"` // non-keyed state (source offset, sink staging)
	Channels       []ChannelBlob       `msgpack:"channels,omitempty"`
	SourceOffset   int64               `msgpack:"source_offset"` // -1 when not a source
	// Splits are the source splits this instance served and each one's
	// offset (sources that rescale by splits only). A manifest in which no
	// task of a source has any was written before splits were stored: each
	// of its tasks served split Instance of its parallelism, at SourceOffset.
	Splits []SourceSplit `msgpack:"splits,omitempty"`
}

// ChainLink is one section of a key group's chain: the ref of a section of
// a blob of checkpoint Checkpoint.
type ChainLink struct {
	Checkpoint uint64  `msgpack:"ckpt"`
	Ref        BlobRef `msgpack:"ref"`
}

// SourceSplit is one split of a source at a checkpoint: split ID of the Of
// splits the source was cut into, and how many records of it were read.
type SourceSplit struct {
	ID     int   `msgpack:"id"`
	Of     int   `msgpack:"of"`
	Offset int64 `msgpack:"offset"`
}

// Manifest describes one completed checkpoint.
type Manifest struct {
	Job            string             `msgpack:"job"`
	CheckpointID   uint64             `msgpack:"checkpoint"`
	Fingerprint    string             `msgpack:"fingerprint"` // graph fingerprint
	MaxParallelism int                `msgpack:"max_parallelism"`
	Parallelism    map[string]int     `msgpack:"parallelism"` // operator → p
	KeyGroups      map[string][]int32 `msgpack:"key_groups"`  // keyed operator → owner table (group → instance)
	// KeyGroupEpochs is each table's epoch (rescales since the job's first
	// table); an operator missing here, as in manifests written before
	// epochs were stored, is at epoch 0.
	KeyGroupEpochs    map[string]uint64 `msgpack:"key_group_epochs,omitempty"`
	Tasks             []TaskSnapshot    `msgpack:"tasks"`
	Mode              string            `msgpack:"mode"`
	TriggeredUnixNano int64             `msgpack:"triggered"`
	CompletedUnixNano int64             `msgpack:"completed"`
}

// Store keeps checkpoints durably. Implementations are safe for concurrent
// use by many tasks of many jobs.
//
// Error conventions shared by all implementations:
//   - a missing job, checkpoint, manifest or blob wraps ErrNotFound;
//   - a blob or manifest that fails verification wraps ErrCorrupt and names
//     job, checkpoint and blob;
//   - an invalid job or blob name wraps ErrInvalidName;
//   - committing a different manifest over a committed one wraps ErrExists;
//   - any call after Close wraps ErrClosed.
type Store interface {
	// PutBlob durably stores data as blob name of checkpoint ckpt of job and
	// returns the reference to record in the manifest. Rewriting a blob
	// replaces it atomically. The store does not keep data once PutBlob
	// returned: a task lays out its next checkpoint in the same buffer.
	PutBlob(ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error)
	// GetBlob reads a blob and verifies its size and CRC32C against ref.
	GetBlob(ctx context.Context, job string, ckpt uint64, ref BlobRef) ([]byte, error)
	// CommitManifest atomically writes the manifest of m.Job/m.CheckpointID;
	// after it returns nil the checkpoint exists. Committing the identical
	// manifest again is a no-op; committing a different one fails with ErrExists.
	CommitManifest(ctx context.Context, m *Manifest) error
	// Manifest reads and verifies the manifest of one checkpoint.
	Manifest(ctx context.Context, job string, ckpt uint64) (*Manifest, error)
	// Latest returns the newest committed manifest that verifies. If newer
	// manifests were skipped because they are corrupt, it returns the
	// fallback manifest together with a *CorruptManifestsError (errors.Is
	// ErrCorrupt): the manifest is usable, the error deserves a warning. With
	// no valid manifest at all the result is nil and the error wraps
	// ErrNotFound (and ErrCorrupt when corrupt manifests were skipped).
	Latest(ctx context.Context, job string) (*Manifest, error)
	// List returns the committed checkpoints whose manifest verifies,
	// ascending. Corrupt manifests are left out and reported the same way as
	// in Latest: the list is returned together with a *CorruptManifestsError.
	// An unknown job has no checkpoints (empty list, nil error).
	List(ctx context.Context, job string) ([]uint64, error)
	// Delete removes a checkpoint, manifest first, then its blobs, so an
	// interrupted Delete never leaves a manifest that points at missing
	// blobs. It also removes uncommitted checkpoints (blobs without a
	// manifest). Deleting a checkpoint of which nothing is stored wraps
	// ErrNotFound.
	Delete(ctx context.Context, job string, ckpt uint64) error
	// Close releases the store; it is idempotent.
	Close() error
}
