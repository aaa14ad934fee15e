package plan

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// MsgpackCodec encodes batches of T as a msgpack array of records, for
// in-flight data and the wire.
type MsgpackCodec[T any] struct{}

// EncodeBatch encodes a batch that holds Records[T].
func (MsgpackCodec[T]) EncodeBatch(b Batch) ([]byte, error) {
	recs, ok := b.(Records[T])
	if !ok {
		return nil, fmt.Errorf("encode batch: got %T, want batch of %T", b, *new(T))
	}
	data, err := msgpack.Marshal([]T(recs))
	if err != nil {
		return nil, fmt.Errorf("encode batch of %d %T: %w", len(recs), *new(T), err)
	}
	return data, nil
}

// DecodeBatch decodes what EncodeBatch made.
func (MsgpackCodec[T]) DecodeBatch(data []byte) (Batch, error) {
	var recs []T
	if err := msgpack.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("decode batch of %T (%d bytes): %w", *new(T), len(data), err)
	}
	return Records[T](recs), nil
}
