package weir

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// msgpackCodec encodes batches of T for in-flight data and the wire.
type msgpackCodec[T any] struct{}

// EncodeBatch encodes records that all hold a T.
func (msgpackCodec[T]) EncodeBatch(recs []any) ([]byte, error) {
	typed := make([]T, len(recs))
	for i, r := range recs {
		v, ok := r.(T)
		if !ok {
			return nil, fmt.Errorf("encode batch: record %d is %T, want %T", i, r, *new(T))
		}
		typed[i] = v
	}
	b, err := msgpack.Marshal(typed)
	if err != nil {
		return nil, fmt.Errorf("encode batch of %d %T: %w", len(recs), *new(T), err)
	}
	return b, nil
}

// DecodeBatch decodes what EncodeBatch made.
func (msgpackCodec[T]) DecodeBatch(data []byte) ([]any, error) {
	var typed []T
	if err := msgpack.Unmarshal(data, &typed); err != nil {
		return nil, fmt.Errorf("decode batch of %T (%d bytes): %w", *new(T), len(data), err)
	}
	recs := make([]any, len(typed))
	for i := range typed {
		recs[i] = typed[i]
	}
	return recs, nil
}
