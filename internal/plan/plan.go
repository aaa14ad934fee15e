// Package plan is the untyped execution plan that the typed graph API in the root
// package compiles to and that the runtime actors execute. Records are carried as
// values of type any; each operator knows its own record types.
package plan

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/keygroups"
)

// Partitioner says how an edge spreads a producer instance's records over the
// consumer's instances.
type Partitioner int

const (
	// Forward sends instance i's records to consumer instance i (equal parallelism).
	Forward Partitioner = iota
	// Rebalance sends records round robin over the consumer instances.
	Rebalance
	// Shuffle sends each record to a random consumer instance.
	Shuffle
	// Broadcast sends every record to every consumer instance.
	Broadcast
	// KeyGroupHash sends a record to the instance that owns its key group.
	KeyGroupHash
)

// String names the partitioner as users write it.
func (p Partitioner) String() string {
	switch p {
	case Forward:
		return "forward"
	case Rebalance:
		return "rebalance"
	case Shuffle:
		return "shuffle"
	case Broadcast:
		return "broadcast"
	case KeyGroupHash:
		return "hash"
	}
	return fmt.Sprintf("partitioner(%d)", int(p))
}

// Kind tells sources, transformations and sinks apart.
type Kind int

const (
	// KindSource has no inputs and reads from a replayable source.
	KindSource Kind = iota
	// KindTransform has inputs and outputs.
	KindTransform
	// KindSink has inputs and no outputs.
	KindSink
)

// Job is the whole plan of one job.
type Job struct {
	Name           string
	MaxParallelism int
	Operators      []*Operator
	Edges          []*Edge
}

// Operator is one node of the plan; it runs as Parallelism task instances.
type Operator struct {
	ID          int
	Name        string
	Kind        Kind
	Parallelism int
	// Keyed is true when the operator holds keyed state partitioned by key group.
	Keyed bool
	// Table says which instance owns each key group, for an operator that
	// NeedsTable: the one owner of that answer, read by the edge writers that
	// route to it, its ownership check, restore and the manifest. Validate
	// fills a missing one with the job's first table.
	Table *keygroups.Table
	// Splittable is true for a source whose instances are SplitSources: a
	// restore may then change its parallelism, handing its splits over.
	Splittable bool
	// New makes the runtime instance for one task. Exactly one of the returned
	// interfaces' kinds matches Kind (SourceFunc, TransformFunc or SinkFunc).
	New func(instance int) (Instance, error)
	// Inputs and Outputs are the edges into and out of this operator, in order.
	Inputs  []*Edge
	Outputs []*Edge
}

// Edge connects two operators.
type Edge struct {
	ID          int
	From, To    *Operator
	Partitioner Partitioner
	// Implicit is true when the graph chose Partitioner from the parallelisms
	// (Forward when they are equal, Rebalance otherwise); it is chosen again
	// when a restore changes them (see ImplicitPartitioner).
	Implicit bool
	// NewWriter makes a producer task's writer for this edge; it knows the
	// record type and, for KeyGroupHash, the key function.
	NewWriter func(cfg WriterConfig) (EdgeWriter, error)
	// Groups makes the edge's RecordGroups for a job of maxParallelism key
	// groups (hash edges; nil on the others).
	Groups func(maxParallelism int) (RecordGroups, error)
	// Recycle takes back a batch its consumer has processed and no longer
	// references (nil: batches are left to the GC).
	Recycle func(b Batch)
	// Codec encodes and decodes batches of this edge's record type (in-flight
	// data and the wire).
	Codec BatchCodec
}

// Validate checks the plan's shape and returns an error naming the mistake.
// An operator that needs a key-group table and has none gets the job's first
// table (contiguous ranges, epoch 0).
func (j *Job) Validate() error {
	if j.Name == "" {
		return errors.New("job has no name")
	}
	if j.MaxParallelism < 1 || j.MaxParallelism > 32768 {
		return fmt.Errorf("job %q: maxParallelism %d out of range [1, 32768]", j.Name, j.MaxParallelism)
	}
	if len(j.Operators) == 0 {
		return fmt.Errorf("job %q has no operators", j.Name)
	}
	names := map[string]bool{}
	sources, sinks := 0, 0
	for _, op := range j.Operators {
		if names[op.Name] {
			return fmt.Errorf("job %q: two operators named %q", j.Name, op.Name)
		}
		names[op.Name] = true
		if op.Parallelism < 1 {
			return fmt.Errorf("operator %q: parallelism %d must be at least 1", op.Name, op.Parallelism)
		}
		if op.Parallelism > j.MaxParallelism {
			return fmt.Errorf("operator %q: parallelism %d exceeds maxParallelism %d", op.Name, op.Parallelism, j.MaxParallelism)
		}
		switch op.Kind {
		case KindSource:
			sources++
			if len(op.Inputs) > 0 {
				return fmt.Errorf("source %q has inputs", op.Name)
			}
		case KindSink:
			sinks++
			if len(op.Outputs) > 0 {
				return fmt.Errorf("sink %q has outputs", op.Name)
			}
		}
		if op.Kind != KindSource && len(op.Inputs) == 0 {
			return fmt.Errorf("operator %q has no input", op.Name)
		}
		if op.Kind != KindSink && len(op.Outputs) == 0 {
			return fmt.Errorf("operator %q: its output goes nowhere (add a sink)", op.Name)
		}
	}
	if sources == 0 {
		return fmt.Errorf("job %q has no source", j.Name)
	}
	if sinks == 0 {
		return fmt.Errorf("job %q has no sink", j.Name)
	}
	if err := j.assignFirstTables(); err != nil {
		return fmt.Errorf("job %q: %w", j.Name, err)
	}
	if err := j.checkTables(); err != nil {
		return fmt.Errorf("job %q: %w", j.Name, err)
	}
	for _, e := range j.Edges {
		if e.Partitioner == Forward && e.From.Parallelism != e.To.Parallelism {
			return fmt.Errorf("edge %s → %s: forward needs equal parallelism (%d vs %d); use Rebalance or Shuffle",
				e.From.Name, e.To.Name, e.From.Parallelism, e.To.Parallelism)
		}
		if e.NewWriter == nil {
			return fmt.Errorf("edge %s → %s: no writer for its records", e.From.Name, e.To.Name)
		}
		// A trial writer catches a hash edge without a key function, an unknown
		// partitioner or more consumers than key groups before anything runs.
		if _, err := e.NewWriter(WriterConfig{Edge: e, Channels: e.To.Parallelism, MaxParallelism: j.MaxParallelism,
			BatchSize: 1, Seal: func(int, Batch) {}}); err != nil {
			return err
		}
	}
	return nil
}

// Fingerprint identifies the plan's shape (operators, kinds, edges); a checkpoint
// can only be restored into a plan with the same fingerprint.
func (j *Job) Fingerprint() string { return j.FingerprintAt(nil) }

// ImplicitPartitioner is the partitioner the graph chooses for an edge that
// names none: Forward between equal parallelisms, Rebalance otherwise.
func ImplicitPartitioner(from, to int) Partitioner {
	if from == to {
		return Forward
	}
	return Rebalance
}

// FingerprintAt is the fingerprint the plan has when its operators run at the
// given parallelisms (operator name → p; a missing one keeps its own): it
// differs from Fingerprint only in the edges whose partitioner was chosen
// from the parallelisms. A checkpoint taken at other parallelisms is checked
// against it.
func (j *Job) FingerprintAt(parallelism map[string]int) string {
	at := func(op *Operator) int {
		if p, ok := parallelism[op.Name]; ok {
			return p
		}
		return op.Parallelism
	}
	h := uint64(14695981039346656037)
	mix := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	mix(j.Name)
	mix(fmt.Sprint(j.MaxParallelism))
	for _, op := range j.Operators {
		mix(fmt.Sprintf("op:%s:%d:%t", op.Name, op.Kind, op.Keyed))
	}
	for _, e := range j.Edges {
		part := e.Partitioner
		if e.Implicit {
			part = ImplicitPartitioner(at(e.From), at(e.To))
		}
		mix(fmt.Sprintf("edge:%s:%s:%s", e.From.Name, e.To.Name, part))
	}
	return fmt.Sprintf("%016x", h)
}
