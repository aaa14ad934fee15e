package state

import (
	"bytes"
	"io"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// encodeFunc writes one value of type T.
type encodeFunc[T any] func(*msgpack.Encoder, T) error

// decodeFunc reads one value of type T.
type decodeFunc[T any] func(*decoder) (T, error)

// decodeIntoFunc reads one value of type T into *p, which holds T's zero
// value.
type decodeIntoFunc[T any] func(d *decoder, p *T) error

// encoderFor returns a boxing-free encoder for common scalar types, one
// that encodes a plain struct field by field (plainEncoderFor), and a
// reflection-based msgpack encoder for everything else.
func encoderFor[T any]() encodeFunc[T] {
	var f any
	switch any(*new(T)).(type) {
	case int:
		f = encodeFunc[int](func(e *msgpack.Encoder, v int) error { return e.EncodeInt(int64(v)) })
	case int64:
		f = encodeFunc[int64](func(e *msgpack.Encoder, v int64) error { return e.EncodeInt(v) })
	case int32:
		f = encodeFunc[int32](func(e *msgpack.Encoder, v int32) error { return e.EncodeInt(int64(v)) })
	case uint64:
		f = encodeFunc[uint64](func(e *msgpack.Encoder, v uint64) error { return e.EncodeUint(v) })
	case float64:
		f = encodeFunc[float64](func(e *msgpack.Encoder, v float64) error { return e.EncodeFloat64(v) })
	case string:
		f = encodeFunc[string](func(e *msgpack.Encoder, v string) error { return e.EncodeString(v) })
	case bool:
		f = encodeFunc[bool](func(e *msgpack.Encoder, v bool) error { return e.EncodeBool(v) })
	case []byte:
		f = encodeFunc[[]byte](func(e *msgpack.Encoder, v []byte) error { return e.EncodeBytes(v) })
	}
	if f != nil {
		return f.(encodeFunc[T])
	}
	if enc := plainEncoderFor[T](); enc != nil {
		return enc
	}
	return func(e *msgpack.Encoder, v T) error { return e.Encode(v) }
}

// decoderFor is the counterpart of encoderFor.
func decoderFor[T any]() decodeFunc[T] {
	if f := scalarDecoderFor[T](); f != nil {
		return f
	}
	into := decoderIntoFor[T]()
	return func(d *decoder) (T, error) {
		var v T
		err := into(d, &v)
		return v, err
	}
}

// scalarDecoderFor returns a boxing-free decoder for the common scalar types
// of encoderFor, nil for every other type.
func scalarDecoderFor[T any]() decodeFunc[T] {
	var f any
	switch any(*new(T)).(type) {
	case int:
		f = decodeFunc[int](func(d *decoder) (int, error) { return d.DecodeInt() })
	case int64:
		f = decodeFunc[int64](func(d *decoder) (int64, error) { return d.DecodeInt64() })
	case int32:
		f = decodeFunc[int32](func(d *decoder) (int32, error) { return d.DecodeInt32() })
	case uint64:
		f = decodeFunc[uint64](func(d *decoder) (uint64, error) { return d.DecodeUint64() })
	case float64:
		f = decodeFunc[float64](func(d *decoder) (float64, error) { return d.DecodeFloat64() })
	case string:
		f = decodeFunc[string](func(d *decoder) (string, error) { return d.str() })
	case bool:
		f = decodeFunc[bool](func(d *decoder) (bool, error) { return d.DecodeBool() })
	case []byte:
		f = decodeFunc[[]byte](func(d *decoder) ([]byte, error) { return d.bytes() })
	}
	if f != nil {
		return f.(decodeFunc[T])
	}
	return nil
}

// decoderIntoFor is decoderFor writing into a given slot: scalars through
// scalarDecoderFor, plain structs through plainStruct (msgpack decodes a
// value plainStruct cannot), everything else by msgpack's reflection.
func decoderIntoFor[T any]() decodeIntoFunc[T] {
	if dec := scalarDecoderFor[T](); dec != nil {
		return func(d *decoder, p *T) error {
			v, err := dec(d)
			*p = v
			return err
		}
	}
	if s := plainStructFor[T](); s != nil {
		return func(d *decoder, p *T) error {
			start := d.r.Len()
			if s.decode(d, unsafe.Pointer(p)) == nil {
				return nil
			}
			var zero T
			*p = zero
			if _, err := d.r.Seek(int64(d.r.Len()-start), io.SeekCurrent); err != nil {
				return err
			}
			return d.Decode(p)
		}
	}
	return func(d *decoder, p *T) error { return d.Decode(p) }
}

// encBuf is a reusable buffer with a deterministic msgpack encoder on it.
type encBuf struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	raw []byte // scratch appended to without the encoder (appendFunc)
	// yield says that the goroutine encoding into this scratch is not the
	// task: it lets the job's goroutines run every yieldEvery entries.
	yield bool
}

// reset empties the buffer and returns the encoder, creating it on first use.
func (b *encBuf) reset() *msgpack.Encoder {
	b.buf.Reset()
	if b.enc == nil {
		b.enc = msgpack.NewEncoder(&b.buf)
		b.enc.SetSortMapKeys(true)
		b.enc.UseCompactInts(true)
	}
	return b.enc
}

// bytes returns a copy of the encoded bytes that the caller may keep.
func (b *encBuf) bytes() []byte {
	return bytes.Clone(b.buf.Bytes())
}

// newDecoder returns a decoder reading straight from r (no extra buffering,
// so r.Len() tells how much input is left).
func newDecoder(r *bytes.Reader) *msgpack.Decoder {
	return msgpack.NewDecoder(r)
}
