package recordcodec

import (
	"encoding/binary"
	"math"
)

// msgpack type codes used by the encoder and decoder.
const (
	codeNil      byte = 0xc0
	codeFalse    byte = 0xc2
	codeTrue     byte = 0xc3
	codeBin8     byte = 0xc4
	codeBin16    byte = 0xc5
	codeBin32    byte = 0xc6
	codeExt8     byte = 0xc7
	codeExt16    byte = 0xc8
	codeExt32    byte = 0xc9
	codeFloat    byte = 0xca
	codeDouble   byte = 0xcb
	codeUint8    byte = 0xcc
	codeUint16   byte = 0xcd
	codeUint32   byte = 0xce
	codeUint64   byte = 0xcf
	codeInt8     byte = 0xd0
	codeInt16    byte = 0xd1
	codeInt32    byte = 0xd2
	codeInt64    byte = 0xd3
	codeFixExt1  byte = 0xd4
	codeFixExt2  byte = 0xd5
	codeFixExt4  byte = 0xd6
	codeFixExt8  byte = 0xd7
	codeFixExt16 byte = 0xd8
	codeStr8     byte = 0xd9
	codeStr16    byte = 0xda
	codeStr32    byte = 0xdb
	codeArray16  byte = 0xdc
	codeArray32  byte = 0xdd
	codeMap16    byte = 0xde
	codeMap32    byte = 0xdf

	fixMapLow   byte = 0x80
	fixArrayLow byte = 0x90
	fixStrLow   byte = 0xa0
	negFixLow   byte = 0xe0
)

// The append functions below write exactly what msgpack/v5's Encoder writes
// with UseCompactInts(true) and its other flags off (see encode_number.go,
// encode_slice.go, encode_map.go of v5.4.1).

// appendCode1 appends code and a 1-byte payload.
func appendCode1(b []byte, code, v byte) []byte { return append(b, code, v) }

// appendCode2 appends code and a big-endian 2-byte payload.
func appendCode2(b []byte, code byte, v uint16) []byte {
	return append(b, code, byte(v>>8), byte(v))
}

// appendCode4 appends code and a big-endian 4-byte payload.
func appendCode4(b []byte, code byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(append(b, code), v)
}

// appendCode8 appends code and a big-endian 8-byte payload.
func appendCode8(b []byte, code byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, code), v)
}

// appendCompactUint is Encoder.EncodeUint: the smallest form for n.
func appendCompactUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return appendCode1(b, codeUint8, byte(n))
	case n <= math.MaxUint16:
		return appendCode2(b, codeUint16, uint16(n))
	case n <= math.MaxUint32:
		return appendCode4(b, codeUint32, uint32(n))
	}
	return appendCode8(b, codeUint64, n)
}

// appendCompactInt is Encoder.EncodeInt: the smallest form for n.
func appendCompactInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendCompactUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return appendCode1(b, codeInt8, byte(n))
	case n >= math.MinInt16:
		return appendCode2(b, codeInt16, uint16(n))
	case n >= math.MinInt32:
		return appendCode4(b, codeInt32, uint32(n))
	}
	return appendCode8(b, codeInt64, uint64(n))
}

// appendStringHeader is Encoder.encodeStringLen. It fails for lengths that do
// not fit in a str32 header (the library would silently truncate them).
func appendStringHeader(b []byte, l int) ([]byte, error) {
	switch {
	case l < 32:
		return append(b, fixStrLow|byte(l)), nil
	case l < 256:
		return appendCode1(b, codeStr8, byte(l)), nil
	case l <= math.MaxUint16:
		return appendCode2(b, codeStr16, uint16(l)), nil
	case uint64(l) <= math.MaxUint32:
		return appendCode4(b, codeStr32, uint32(l)), nil
	}
	return b, errTooLong(l)
}

// appendString is Encoder.EncodeString without interning.
func appendString(b []byte, s string) ([]byte, error) {
	if len(s) < 32 {
		// The common case, kept small enough to inline.
		return append(append(b, fixStrLow|byte(len(s))), s...), nil
	}
	b, err := appendStringHeader(b, len(s))
	if err != nil {
		return b, err
	}
	return append(b, s...), nil
}

// appendBinHeader is Encoder.EncodeBytesLen.
func appendBinHeader(b []byte, l int) ([]byte, error) {
	switch {
	case l < 256:
		return appendCode1(b, codeBin8, byte(l)), nil
	case l <= math.MaxUint16:
		return appendCode2(b, codeBin16, uint16(l)), nil
	case uint64(l) <= math.MaxUint32:
		return appendCode4(b, codeBin32, uint32(l)), nil
	}
	return b, errTooLong(l)
}

// appendBytes is Encoder.EncodeBytes: nil is msgpack nil, anything else bin.
func appendBytes(b []byte, v []byte) ([]byte, error) {
	if v == nil {
		return append(b, codeNil), nil
	}
	b, err := appendBinHeader(b, len(v))
	if err != nil {
		return b, err
	}
	return append(b, v...), nil
}

// appendArrayHeader is Encoder.EncodeArrayLen.
func appendArrayHeader(b []byte, l int) ([]byte, error) {
	switch {
	case l < 16:
		return append(b, fixArrayLow|byte(l)), nil
	case l <= math.MaxUint16:
		return appendCode2(b, codeArray16, uint16(l)), nil
	case uint64(l) <= math.MaxUint32:
		return appendCode4(b, codeArray32, uint32(l)), nil
	}
	return b, errTooLong(l)
}

// appendMapHeader is Encoder.EncodeMapLen.
func appendMapHeader(b []byte, l int) []byte {
	switch {
	case l < 16:
		return append(b, fixMapLow|byte(l))
	case l <= math.MaxUint16:
		return appendCode2(b, codeMap16, uint16(l))
	}
	return appendCode4(b, codeMap32, uint32(l))
}
