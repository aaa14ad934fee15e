package store

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// SectionKind says what a checkpoint section holds.
type SectionKind uint8

// The kinds of checkpoint sections.
const (
	// KindKeyGroup is the keyed state of one key group of an operator.
	KindKeyGroup SectionKind = iota + 1
	// KindOperatorState is the non-keyed state of one instance of an operator.
	KindOperatorState
	// KindChannel is the captured in-flight data of one input channel of
	// one instance of an operator.
	KindChannel
)

// SectionKey names a checkpoint section by what it holds, never by the node,
// slot or blob that stored it: a key group's state is found by (operator,
// key group) whichever instance wrote it, so it is found again after a
// restart, a move or a rescale. Operator and channel state belong to one
// instance of the checkpoint (its subtask index there) and carry it.
type SectionKey struct {
	Operator string      `msgpack:"op"`
	Kind     SectionKind `msgpack:"kind"`
	KeyGroup int         `msgpack:"kg,omitempty"`   // KindKeyGroup
	Instance int         `msgpack:"inst,omitempty"` // KindOperatorState, KindChannel: subtask index in the checkpoint
	Input    int         `msgpack:"in,omitempty"`   // KindChannel: input channel index at that instance
}

// KeyGroupKey names the state of key group g of operator op.
func KeyGroupKey(op string, g int) SectionKey {
	return SectionKey{Operator: op, Kind: KindKeyGroup, KeyGroup: g}
}

// OperatorStateKey names the non-keyed state of instance i of operator op.
func OperatorStateKey(op string, i int) SectionKey {
	return SectionKey{Operator: op, Kind: KindOperatorState, Instance: i}
}

// ChannelKey names the channel state of input in of instance i of operator op.
func ChannelKey(op string, i, in int) SectionKey {
	return SectionKey{Operator: op, Kind: KindChannel, Instance: i, Input: in}
}

// String describes the section, e.g. "count key group 17".
func (k SectionKey) String() string {
	switch k.Kind {
	case KindKeyGroup:
		return fmt.Sprintf("%s key group %d", k.Operator, k.KeyGroup)
	case KindOperatorState:
		return fmt.Sprintf("%s[%d] operator state", k.Operator, k.Instance)
	case KindChannel:
		return fmt.Sprintf("%s[%d] channel state of input %d", k.Operator, k.Instance, k.Input)
	}
	return fmt.Sprintf("%s section of unknown kind %d", k.Operator, k.Kind)
}

// logFields adds the key's fields to a log event: operator, and key_group or
// instance (and input).
func (k SectionKey) logFields(e *zerolog.Event) *zerolog.Event {
	e = e.Str("operator", k.Operator)
	switch k.Kind {
	case KindKeyGroup:
		return e.Int("key_group", k.KeyGroup)
	case KindChannel:
		return e.Int("instance", k.Instance).Int("input", k.Input)
	default:
		return e.Int("instance", k.Instance)
	}
}

// SectionRequest is one section a restore reads: what it holds and the checkpoint
// manifest's reference to it.
type SectionRequest struct {
	Key SectionKey
	Ref BlobRef
}

// ReadStats counts where a restore's sections came from: this node's local
// copy or the checkpoint store (remote), and how long reading took. Bytes
// are the sizes of the sections read.
type ReadStats struct {
	LocalBytes     int64
	RemoteBytes    int64
	LocalSections  int
	RemoteSections int
	Took           time.Duration
}

// Add adds o's counts and time to s.
func (s *ReadStats) Add(o ReadStats) {
	s.LocalBytes += o.LocalBytes
	s.RemoteBytes += o.RemoteBytes
	s.LocalSections += o.LocalSections
	s.RemoteSections += o.RemoteSections
	s.Took += o.Took
}

// LocalFirstReader is a Store that can serve sections from a node-local
// copy addressed by SectionKey (the Mirror).
type LocalFirstReader interface {
	ReadSections(ctx context.Context, job string, ckpt uint64, secs []SectionRequest) ([][]byte, ReadStats, error)
}

// ReadSections reads secs of checkpoint ckpt of job, each verified against
// its manifest reference: from st's local copy first when st keeps one
// (LocalFirstReader), else all from st, counted as remote. A failure is a
// *SectionError whose Index is into secs.
func ReadSections(ctx context.Context, st Store, job string, ckpt uint64, secs []SectionRequest) ([][]byte, ReadStats, error) {
	if lf, ok := st.(LocalFirstReader); ok {
		return lf.ReadSections(ctx, job, ckpt, secs)
	}
	start := time.Now()
	data, err := GetSections(ctx, st, job, ckpt, refsOf(secs))
	stats := ReadStats{Took: time.Since(start)}
	if err != nil {
		return nil, stats, err
	}
	for _, s := range secs {
		stats.RemoteBytes += s.Ref.Size
		stats.RemoteSections++
	}
	return data, stats, nil
}

// refsOf lists the manifest references of secs.
func refsOf(secs []SectionRequest) []BlobRef {
	refs := make([]BlobRef, len(secs))
	for i, s := range secs {
		refs[i] = s.Ref
	}
	return refs
}

// EachSection reads secs as ReadSections does and hands each section's
// verified bytes to fn as soon as it is read, each exactly once, in no
// fixed order (a Mirror hands over its local sections first). data is
// valid only until fn returns: a Mirror reads the local sections one by
// one into a single reused buffer, so a restore holds one section at a
// time rather than all of them. A read failure is a *SectionError whose
// Index is into secs; an error of fn stops the read and is returned as it
// is. Took counts the reading, not fn.
func EachSection(ctx context.Context, st Store, job string, ckpt uint64, secs []SectionRequest, fn func(i int, data []byte) error) (ReadStats, error) {
	// Only a Mirror itself streams: a store that embeds one and reads
	// otherwise (remote reads only) keeps its own ReadSections.
	if m, ok := st.(*Mirror); ok {
		return m.eachSection(ctx, job, ckpt, secs, true, fn)
	}
	data, stats, err := ReadSections(ctx, st, job, ckpt, secs)
	if err != nil {
		return stats, err
	}
	for i, d := range data {
		if err := fn(i, d); err != nil {
			return stats, err
		}
	}
	return stats, nil
}
