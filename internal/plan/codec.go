package plan

import (
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/recordcodec"
	"github.com/weirstream/weir/transport"
)

// MsgpackCodec encodes batches of T as a msgpack array of records, for
// in-flight data and the wire. Record types recordcodec supports (plain
// values and structs of them) are encoded without per-record reflection, to
// the bytes the msgpack library writes with compact integers; other types go
// through the library. With a Pool, decoding fills recycled batches, and
// short decoded strings that repeat (keys) share one allocation.
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

// internCaches hold the recordcodec.Strings of decoding goroutines: a
// decoder takes one for a batch and puts it back, so each processor keeps a
// warm cache of the keys it decodes.
var internCaches = sync.Pool{New: func() any { return new(recordcodec.Strings) }}

// DecodeBatch decodes what AppendBatch made. Input from outside (the wire)
// is safe: the compiled decoders check every length they read, and input for
// the library is checked with transport.CheckMsgpack first.
func (c MsgpackCodec[T]) DecodeBatch(data []byte) (Batch, error) {
	var recs []T
	var err error
	if fast, ok := recordcodec.For[T](); ok {
		strs := internCaches.Get().(*recordcodec.Strings)
		recs, err = fast.DecodeBatchWith(c.Pool.spare(), data, strs)
		internCaches.Put(strs)
	} else if err = transport.CheckMsgpack(data); err == nil {
		err = msgpack.Unmarshal(data, &recs)
	}
	if err != nil {
		return nil, fmt.Errorf("decode batch of %T (%d bytes): %w", *new(T), len(data), err)
	}
	return Records[T](recs), nil
}
