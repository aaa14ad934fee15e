package plan

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/recordcodec"
)

// MsgpackCodec encodes batches of T as a msgpack array of records, for
// in-flight data and the wire. Record types recordcodec supports (plain
// values and structs of them) are encoded without per-record reflection, to
// the same bytes the msgpack library writes; other types go through the
// library. With a Pool, decoding fills recycled batches.
type MsgpackCodec[T any] struct {
	Pool *Pool[T]
}

// AppendBatch appends the encoding of a batch of T (Records or Grouped; the
// key groups are not encoded) to dst.
func (c MsgpackCodec[T]) AppendBatch(dst []byte, b Batch) ([]byte, error) {
	recs, ok := RecordsOf[T](b)
	if !ok {
		return dst, fmt.Errorf("encode batch: got %T, want batch of %T", b, *new(T))
	}
	if fast, ok := recordcodec.For[T](); ok {
		out, err := fast.AppendBatch(dst, recs)
		if err != nil {
			return dst, fmt.Errorf("encode batch of %d %T: %w", len(recs), *new(T), err)
		}
		return out, nil
	}
	data, err := msgpack.Marshal(recs)
	if err != nil {
		return dst, fmt.Errorf("encode batch of %d %T: %w", len(recs), *new(T), err)
	}
	return append(dst, data...), nil
}

// DecodeBatch decodes what AppendBatch made.
func (c MsgpackCodec[T]) DecodeBatch(data []byte) (Batch, error) {
	var recs []T
	var err error
	if fast, ok := recordcodec.For[T](); ok {
		recs, err = fast.DecodeBatchInto(c.Pool.spare(), data)
	} else {
		err = msgpack.Unmarshal(data, &recs)
	}
	if err != nil {
		return nil, fmt.Errorf("decode batch of %T (%d bytes): %w", *new(T), len(data), err)
	}
	return Records[T](recs), nil
}
