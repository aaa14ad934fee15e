package recordcodec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"unsafe"
)

// Codec encodes and decodes batches of T without per-record reflection. A
// Codec is immutable and safe for concurrent use.
type Codec[T any] struct {
	elem valueCodec
	// strct is elem's struct codec when T is a struct, called directly.
	strct *structCodec
	// bytesBatch is set when T is of kind uint8: the library writes []T as
	// one msgpack bin, not as an array.
	bytesBatch bool
}

// codecs caches For's result (a *Codec[T], nil when unsupported) per type.
var codecs sync.Map // reflect.Type -> *Codec[T]

// For compiles a codec for T once, using reflect only here. ok is false when
// T's shape is not supported (see the package documentation); the caller
// then keeps using msgpack.Marshal and msgpack.Unmarshal.
//
// Before returning a codec For checks that it agrees with the library on
// sample batches, which also catches types given their own encoder with
// msgpack.Register or RegisterExt before For was called (registering one
// later is not noticed). The result is cached per type, so calling For
// again is cheap and returns the same codec.
func For[T any]() (c *Codec[T], ok bool) {
	t := reflect.TypeFor[T]()
	if v, hit := codecs.Load(t); hit {
		c = v.(*Codec[T])
		return c, c != nil
	}
	c, _ = build[T](t)
	v, _ := codecs.LoadOrStore(t, c)
	c = v.(*Codec[T])
	return c, c != nil
}

// build compiles the codec of T, or says why there is none.
func build[T any](t reflect.Type) (*Codec[T], error) {
	c := &Codec[T]{bytesBatch: t.Kind() == reflect.Uint8}
	if t.Kind() == reflect.Struct {
		s, err := compileStruct(t)
		if err != nil {
			return nil, err
		}
		c.strct, c.elem = s, s.codec()
	} else {
		elem, err := compile(t)
		if err != nil {
			return nil, err
		}
		c.elem = elem
	}
	if err := agreesWithLibrary(c); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return c, nil
}

// AppendBatch appends the msgpack encoding of recs to dst and returns the
// extended buffer. The bytes are identical to what the library's Encoder
// writes for recs with UseCompactInts(true) (and its other options off):
// nil for a nil batch, else an array (a bin when T is a byte kind) of
// records, structs as maps in field order, every integer in its smallest
// form, floats in their own width. msgpack.Unmarshal decodes them.
//
// It fails only for a batch, string or byte slice longer than a msgpack
// 32-bit header can say, for which the library would write a corrupt
// header; dst is then returned unchanged.
func (c *Codec[T]) AppendBatch(dst []byte, recs []T) ([]byte, error) {
	if recs == nil {
		return append(dst, codeNil), nil
	}
	if c.bytesBatch {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(recs))), len(recs))
		b, err := appendBytes(dst, raw)
		if err != nil {
			return dst, fmt.Errorf("encode batch of %d: %w", len(recs), err)
		}
		return b, nil
	}
	b, err := appendArrayHeader(dst, len(recs))
	if err != nil {
		return dst, fmt.Errorf("encode batch of %d: %w", len(recs), err)
	}
	b = slices.Grow(b, len(recs)*c.elem.minSize)
	if s := c.strct; s != nil {
		for i := range recs {
			if b, err = s.encode(b, unsafe.Pointer(&recs[i])); err != nil {
				return dst, recordError("encode batch", i, err)
			}
		}
		return b, nil
	}
	enc := c.elem.enc
	for i := range recs {
		if b, err = enc(b, unsafe.Pointer(&recs[i])); err != nil {
			return dst, recordError("encode batch", i, err)
		}
	}
	return b, nil
}

// DecodeBatch decodes a batch and returns the same values (or, for input it
// refuses, an error) as msgpack.Unmarshal(data, &out) with out a []T.
//
// Everything AppendBatch and msgpack.Marshal([]T) write (compact integers
// or not, so old checkpoints too), and keys in any order, unknown keys,
// integers of any width, floats written as integers, strings written as bin
// and nil values, are decoded without the library. Array-encoded
// structs and values of the wrong type are left to msgpack.Unmarshal, after
// a check that the input is complete, so its results and errors are the
// library's. Like the library it ignores bytes after the batch.
//
// Malformed input is an error, never a panic. No length prefix is trusted
// further than the bytes present (the batch is preallocated for at most
// len(data) records), and input nested deeper than 10000 levels is refused
// even where the library, recursing, would accept it. Decoded strings and
// byte slices never alias data, so the caller may reuse it.
func (c *Codec[T]) DecodeBatch(data []byte) ([]T, error) {
	return c.DecodeBatchInto(nil, data)
}

// DecodeBatchInto is DecodeBatch that fills dst's backing array, cleared
// first, when it has room for the batch (a recycled batch), instead of
// allocating one. The result is what DecodeBatch returns.
func (c *Codec[T]) DecodeBatchInto(dst []T, data []byte) ([]T, error) {
	return c.DecodeBatchWith(dst, data, nil)
}

// DecodeBatchWith is DecodeBatchInto that interns decoded strings through
// strs: a string of at most 32 bytes (in a string field, or a T of kind
// string) equal to one strs holds is that string, not a new allocation, and
// new ones are cached in strs. A nil strs interns nothing, which is
// DecodeBatchInto. The values are what DecodeBatchInto returns either way;
// []byte values, being mutable, are never shared. Batches left to the
// library (see DecodeBatch) are decoded without strs.
//
// strs must not be in use by another goroutine during the call; the strings
// returned may be shared freely.
func (c *Codec[T]) DecodeBatchWith(dst []T, data []byte, strs *Strings) ([]T, error) {
	var (
		out []T
		err error
	)
	if c.bytesBatch {
		out, err = c.decodeBytesBatch(data)
	} else {
		out, err = c.decodeArray(dst, data, strs)
	}
	if err == errSlow {
		return decodeWithLibrary[T](data)
	}
	return out, err
}

// decodeArray decodes the usual form of a batch: an array of records,
// interning strings through strs if it is not nil.
func (c *Codec[T]) decodeArray(dst []T, data []byte, strs *Strings) ([]T, error) {
	d := decoder{data: data, strs: strs}
	n, err := d.readArrayLen()
	if err != nil {
		if err == errSlow {
			return nil, err
		}
		return nil, fmt.Errorf("decode batch: array header: %w", err)
	}
	if n < 0 {
		return nil, nil
	}
	// Every record takes at least one byte: this bounds the allocation.
	if n > len(data)-d.pos {
		return nil, fmt.Errorf("decode batch: %d records announced in %d bytes: %w", n, len(data)-d.pos, errTruncated)
	}
	var out []T
	if n > 0 && cap(dst) >= n {
		out = dst[:n]
		clear(out) // absent fields decode as zero
	} else {
		out = make([]T, n)
	}
	if s := c.strct; s != nil {
		for i := range out {
			if err := s.decode(&d, unsafe.Pointer(&out[i])); err != nil {
				if err == errSlow {
					return nil, err
				}
				return nil, recordError("decode batch", i, err)
			}
		}
		return out, nil
	}
	dec := c.elem.dec
	for i := range out {
		if err := dec(&d, unsafe.Pointer(&out[i])); err != nil {
			if err == errSlow {
				return nil, err
			}
			return nil, recordError("decode batch", i, err)
		}
	}
	return out, nil
}

// decodeBytesBatch decodes a batch of a byte kind, which the library writes
// as one bin (and reads from str or bin, nil being a nil batch).
func (c *Codec[T]) decodeBytesBatch(data []byte) ([]T, error) {
	d := decoder{data: data}
	b, isNil, err := d.readRaw()
	if err != nil {
		if err == errSlow {
			return nil, err
		}
		return nil, fmt.Errorf("decode batch of bytes: %w", err)
	}
	if isNil {
		return nil, nil
	}
	out := make([]T, len(b))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)), b)
	return out, nil
}

// recordError wraps err with the operation, the record and, if err is a
// fieldError, the field: `decode batch: record 12 field "k": ...`.
func recordError(op string, i int, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s: record %d field %q: %w", op, i, fe.path, fe.err)
	}
	return fmt.Errorf("%s: record %d: %w", op, i, err)
}
