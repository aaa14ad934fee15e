package state

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// The appenders below write the bytes msgpack's Encoder writes for the same
// call with the state's options (encBuf: compact ints, no compact floats, no
// interned strings), appended to a slice instead of written through an
// io.Writer one call at a time. TestAppendersWriteWhatMsgpackWrites holds
// them to it at every boundary of every encoding's size.

// appendFunc appends the encoding of one value of type T to b.
type appendFunc[T any] func(b []byte, v T) []byte

// appendCode appends a one-byte code and n big-endian in size bytes.
func appendCode(b []byte, code byte, n uint64, size int) []byte {
	b = append(b, code)
	switch size {
	case 1:
		return append(b, byte(n))
	case 2:
		return binary.BigEndian.AppendUint16(b, uint16(n))
	case 4:
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	return binary.BigEndian.AppendUint64(b, n)
}

// appendUint is Encoder.EncodeUint.
func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return appendCode(b, msgpcode.Uint8, n, 1)
	case n <= math.MaxUint16:
		return appendCode(b, msgpcode.Uint16, n, 2)
	case n <= math.MaxUint32:
		return appendCode(b, msgpcode.Uint32, n, 4)
	}
	return appendCode(b, msgpcode.Uint64, n, 8)
}

// appendInt is Encoder.EncodeInt.
func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= int64(int8(msgpcode.NegFixedNumLow)):
		return append(b, byte(n))
	case n >= math.MinInt8:
		return appendCode(b, msgpcode.Int8, uint64(n), 1)
	case n >= math.MinInt16:
		return appendCode(b, msgpcode.Int16, uint64(n), 2)
	case n >= math.MinInt32:
		return appendCode(b, msgpcode.Int32, uint64(n), 4)
	}
	return appendCode(b, msgpcode.Int64, uint64(n), 8)
}

// appendFloat32 is Encoder.EncodeFloat32.
func appendFloat32(b []byte, f float32) []byte {
	return appendCode(b, msgpcode.Float, uint64(math.Float32bits(f)), 4)
}

// appendFloat64 is Encoder.EncodeFloat64.
func appendFloat64(b []byte, f float64) []byte {
	return appendCode(b, msgpcode.Double, math.Float64bits(f), 8)
}

// appendBool is Encoder.EncodeBool.
func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, msgpcode.True)
	}
	return append(b, msgpcode.False)
}

// appendString is Encoder.EncodeString.
func appendString(b []byte, s string) []byte {
	if l := len(s); l < 32 {
		b = append(b, msgpcode.FixedStrLow|byte(l))
	} else {
		b = appendLen(b, uint64(l), msgpcode.Str8, msgpcode.Str16, msgpcode.Str32)
	}
	return append(b, s...)
}

// appendBytes is Encoder.EncodeBytes: nil is msgpack's nil.
func appendBytes(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, msgpcode.Nil)
	}
	b = appendLen(b, uint64(len(v)), msgpcode.Bin8, msgpcode.Bin16, msgpcode.Bin32)
	return append(b, v...)
}

// appendLen appends length l in the smallest of the forms whose codes are
// c8, c16 and c32.
func appendLen(b []byte, l uint64, c8, c16, c32 byte) []byte {
	switch {
	case l <= math.MaxUint8:
		return appendCode(b, c8, l, 1)
	case l <= math.MaxUint16:
		return appendCode(b, c16, l, 2)
	}
	return appendCode(b, c32, l, 4)
}

// appendMapLen is Encoder.EncodeMapLen.
func appendMapLen(b []byte, n int) []byte {
	l := uint64(n)
	switch {
	case l < 16:
		return append(b, msgpcode.FixedMapLow|byte(l))
	case l <= math.MaxUint16:
		return appendCode(b, msgpcode.Map16, l, 2)
	}
	return appendCode(b, msgpcode.Map32, l, 4)
}

// readMapLen reads the length of the msgpack map b starts with
// (appendMapLen's inverse); ok is false when b does not start with one.
func readMapLen(b []byte) (n int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	switch c := b[0]; {
	case c >= msgpcode.FixedMapLow && c <= msgpcode.FixedMapHigh:
		return int(c & 0x0f), true
	case c == msgpcode.Map16 && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:3])), true
	case c == msgpcode.Map32 && len(b) >= 5:
		return int(binary.BigEndian.Uint32(b[1:5])), true
	}
	return 0, false
}

// scalarAppenderFor returns the appender of the scalar types encoderFor
// encodes without reflection, nil for every other type.
func scalarAppenderFor[T any]() appendFunc[T] {
	var f any
	switch any(*new(T)).(type) {
	case int:
		f = appendFunc[int](func(b []byte, v int) []byte { return appendInt(b, int64(v)) })
	case int64:
		f = appendFunc[int64](appendInt)
	case int32:
		f = appendFunc[int32](func(b []byte, v int32) []byte { return appendInt(b, int64(v)) })
	case uint64:
		f = appendFunc[uint64](appendUint)
	case float64:
		f = appendFunc[float64](appendFloat64)
	case string:
		f = appendFunc[string](appendString)
	case bool:
		f = appendFunc[bool](appendBool)
	case []byte:
		f = appendFunc[[]byte](appendBytes)
	}
	if f != nil {
		return f.(appendFunc[T])
	}
	return nil
}

// appenderFor returns an appender of T's encoding (encoderFor's bytes) for
// the scalar types and plain structs, nil for every other type.
func appenderFor[T any]() appendFunc[T] {
	if f := scalarAppenderFor[T](); f != nil {
		return f
	}
	return plainAppenderFor[T]()
}

// encodeAppended writes what app appends for v through e: straight into
// the free capacity of e's buffer when e writes to a bytes.Buffer, as
// encBuf's encoder does.
func encodeAppended[T any](e *msgpack.Encoder, app appendFunc[T], v T) error {
	if buf, ok := e.Writer().(*bytes.Buffer); ok {
		_, err := buf.Write(app(buf.AvailableBuffer(), v))
		return err
	}
	_, err := e.Writer().Write(app(nil, v))
	return err
}
