// Package inflight encodes, stores and replays in-flight data: the buffers a
// checkpoint barrier overtook, plus what a task took from an input after its
// snapshot and before that input's barrier (DESIGN.md invariant 3). On restore
// they are replayed before any new input, in their original order per channel.
// Restoring at a new parallelism first passes them through Redistribute, which
// splits them by key group (or by a fixed rule on other edges) over the new
// instances.
package inflight

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
)

// ErrCorrupt marks channel state that cannot be decoded.
var ErrCorrupt = errors.New("corrupt channel state")

// formatVersion is the first byte of every encoded channel state: 2 stores
// each buffer's mark; 1 (still decoded) did not.
const (
	formatVersion   = 2
	formatNoMarksV1 = 1
)

// WatermarkKind is the Batch.MarkKind of a watermark (the runtime's
// WatermarkMark); other non-zero kinds (idleness) carry no time.
const WatermarkKind uint8 = 1

// Batch is one captured buffer: its sequence number on the channel, records,
// and the mark that followed them.
type Batch struct {
	Seq     uint64
	Records plan.Batch
	// MarkKind and MarkAt are the watermark (or idleness) that followed the
	// buffer's records on its channel, as the runtime's buffers carry it
	// (kind 0: none). Replayed after the records, it gives a restored
	// consumer the event time the undisturbed one had.
	MarkKind uint8
	MarkAt   int64
	// Round is the replay round of restored channel state: the checkpoint
	// whose channel state the batch first became (LabelRounds). It is not
	// part of the encoding; the manifest carries it.
	Round uint64
}

// wireBatch is a Batch with its records encoded by the edge's codec.
type wireBatch struct {
	_msgpack struct{} `msgpack:",as_array"`
	Seq      uint64
	Data     []byte
	MarkKind uint8
	MarkAt   int64
}

// wireBatchV1 is a wireBatch of format 1, without the mark.
type wireBatchV1 struct {
	_msgpack struct{} `msgpack:",as_array"`
	Seq      uint64
	Data     []byte
}

// Encode turns one channel's captured buffers into bytes, in order. It returns
// the encoding and the number of records.
func Encode(codec plan.BatchCodec, batches []Batch) ([]byte, int, error) {
	wire := make([]wireBatch, len(batches))
	records := 0
	for i, b := range batches {
		data, err := codec.AppendBatch(nil, b.Records)
		if err != nil {
			return nil, 0, fmt.Errorf("encode captured buffer seq %d: %w", b.Seq, err)
		}
		wire[i] = wireBatch{Seq: b.Seq, Data: data, MarkKind: b.MarkKind, MarkAt: b.MarkAt}
		records += b.Records.Len()
	}
	body, err := msgpack.Marshal(wire)
	if err != nil {
		return nil, 0, fmt.Errorf("encode channel state: %w", err)
	}
	return append([]byte{formatVersion}, body...), records, nil
}

// Decode turns bytes made by Encode back into buffers, in their original
// order (format 1, from before marks were stored, decodes without marks).
func Decode(codec plan.BatchCodec, data []byte) ([]Batch, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("empty channel state: %w", ErrCorrupt)
	}
	wire, err := decodeWire(data)
	if err != nil {
		return nil, err
	}
	out := make([]Batch, len(wire))
	var last uint64
	for i, w := range wire {
		if i > 0 && w.Seq <= last {
			return nil, fmt.Errorf("channel state buffer %d has seq %d after %d: %w", i, w.Seq, last, ErrCorrupt)
		}
		last = w.Seq
		recs, err := codec.DecodeBatch(w.Data)
		if err != nil {
			return nil, fmt.Errorf("channel state buffer seq %d: %v: %w", w.Seq, err, ErrCorrupt)
		}
		out[i] = Batch{Seq: w.Seq, Records: recs, MarkKind: w.MarkKind, MarkAt: w.MarkAt}
	}
	return out, nil
}

// decodeWire reads the buffers of either format.
func decodeWire(data []byte) ([]wireBatch, error) {
	var wire []wireBatch
	switch data[0] {
	case formatVersion:
		if err := msgpack.Unmarshal(data[1:], &wire); err != nil {
			return nil, fmt.Errorf("decode channel state: %v: %w", err, ErrCorrupt)
		}
	case formatNoMarksV1:
		var v1 []wireBatchV1
		if err := msgpack.Unmarshal(data[1:], &v1); err != nil {
			return nil, fmt.Errorf("decode channel state: %v: %w", err, ErrCorrupt)
		}
		wire = make([]wireBatch, len(v1))
		for i, w := range v1 {
			wire[i] = wireBatch{Seq: w.Seq, Data: w.Data}
		}
	default:
		return nil, fmt.Errorf("channel state format version %d, want %d: %w", data[0], formatVersion, ErrCorrupt)
	}
	return wire, nil
}
