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
// library.
type MsgpackCodec[T any] struct{}

// EncodeBatch encodes a batch of T (Records or Grouped; the key groups are
// not encoded).
func (MsgpackCodec[T]) EncodeBatch(b Batch) ([]byte, error) {
	recs, ok := RecordsOf[T](b)
	if !ok {
		return nil, fmt.Errorf("encode batch: got %T, want batch of %T", b, *new(T))
	}
	var data []byte
	var err error
	if fast, ok := recordcodec.For[T](); ok {
		data, err = fast.AppendBatch(make([]byte, 0, 16+len(recs)*16), recs)
	} else {
		data, err = msgpack.Marshal([]T(recs))
	}
	if err != nil {
		return nil, fmt.Errorf("encode batch of %d %T: %w", len(recs), *new(T), err)
	}
	return data, nil
}

// DecodeBatch decodes what EncodeBatch made.
func (MsgpackCodec[T]) DecodeBatch(data []byte) (Batch, error) {
	var recs []T
	var err error
	if fast, ok := recordcodec.For[T](); ok {
		recs, err = fast.DecodeBatch(data)
	} else {
		err = msgpack.Unmarshal(data, &recs)
	}
	if err != nil {
		return nil, fmt.Errorf("decode batch of %T (%d bytes): %w", *new(T), len(data), err)
	}
	return Records[T](recs), nil
}
