package recordcodec

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// encodeFunc appends the msgpack encoding of the value at p to b.
type encodeFunc func(b []byte, p unsafe.Pointer) ([]byte, error)

// decodeFunc decodes the next value of d into the value at p. It returns
// errSlow for input it leaves to the library.
type decodeFunc func(d *decoder, p unsafe.Pointer) error

// valueCodec encodes and decodes values of one Go type in place.
type valueCodec struct {
	enc encodeFunc
	dec decodeFunc
	// minSize is the fewest bytes a value takes encoded, to size buffers.
	minSize int
}

// compile builds the codec for values of type t, or says why t is not
// supported.
func compile(t reflect.Type) (valueCodec, error) {
	if it, ok := customCoding(t); ok {
		return valueCodec{}, fmt.Errorf("%s implements %s", t, it)
	}
	switch t.Kind() {
	case reflect.Bool:
		return valueCodec{enc: encodeBool, dec: decodeAs((*decoder).readBool), minSize: 1}, nil
	case reflect.Int:
		return valueCodec{enc: encodeInt, dec: decodeInt[int], minSize: 1}, nil
	case reflect.Int8:
		return valueCodec{enc: encodeInt8, dec: decodeInt[int8], minSize: 1}, nil
	case reflect.Int16:
		return valueCodec{enc: encodeInt16, dec: decodeInt[int16], minSize: 1}, nil
	case reflect.Int32:
		return valueCodec{enc: encodeInt32, dec: decodeInt[int32], minSize: 1}, nil
	case reflect.Int64:
		return valueCodec{enc: encodeInt64, dec: decodeInt[int64], minSize: 1}, nil
	case reflect.Uint:
		return valueCodec{enc: encodeUint, dec: decodeInt[uint], minSize: 1}, nil
	case reflect.Uint8:
		return valueCodec{enc: encodeUint8, dec: decodeInt[uint8], minSize: 1}, nil
	case reflect.Uint16:
		return valueCodec{enc: encodeUint16, dec: decodeInt[uint16], minSize: 1}, nil
	case reflect.Uint32:
		return valueCodec{enc: encodeUint32, dec: decodeInt[uint32], minSize: 1}, nil
	case reflect.Uint64:
		return valueCodec{enc: encodeUint64, dec: decodeInt[uint64], minSize: 1}, nil
	case reflect.Float32:
		return valueCodec{enc: encodeFloat32, dec: decodeAs((*decoder).readFloat32), minSize: 5}, nil
	case reflect.Float64:
		return valueCodec{enc: encodeFloat64, dec: decodeAs((*decoder).readFloat64), minSize: 9}, nil
	case reflect.String:
		return valueCodec{enc: encodeString, dec: decodeAs((*decoder).readString), minSize: 1}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			// The library encodes any slice of a byte kind as bin.
			return valueCodec{enc: encodeBytes, dec: decodeAs((*decoder).readBytes), minSize: 1}, nil
		}
	case reflect.Struct:
		s, err := compileStruct(t)
		if err != nil {
			return valueCodec{}, err
		}
		return s.codec(), nil
	}
	return valueCodec{}, fmt.Errorf("%s: kind %s is not supported", t, t.Kind())
}

// The encoders of the scalar kinds. Each reads the value with the Go type of
// its kind, which has the same layout as any named type of that kind, and
// writes what the library's encoder for that kind writes with
// UseCompactInts(true): every integer in its smallest form (EncodeInt for
// the signed kinds, EncodeUint for the unsigned ones), floats in their own
// width.

func encodeBool(b []byte, p unsafe.Pointer) ([]byte, error) {
	if *(*bool)(p) {
		return append(b, codeTrue), nil
	}
	return append(b, codeFalse), nil
}

func encodeInt(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactInt(b, int64(*(*int)(p))), nil
}

func encodeInt8(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactInt(b, int64(*(*int8)(p))), nil
}

func encodeInt16(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactInt(b, int64(*(*int16)(p))), nil
}

func encodeInt32(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactInt(b, int64(*(*int32)(p))), nil
}

func encodeInt64(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactInt(b, *(*int64)(p)), nil
}

func encodeUint(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactUint(b, uint64(*(*uint)(p))), nil
}

func encodeUint8(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactUint(b, uint64(*(*uint8)(p))), nil
}

func encodeUint16(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactUint(b, uint64(*(*uint16)(p))), nil
}

func encodeUint32(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactUint(b, uint64(*(*uint32)(p))), nil
}

func encodeUint64(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCompactUint(b, *(*uint64)(p)), nil
}

func encodeFloat32(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCode4(b, codeFloat, math.Float32bits(*(*float32)(p))), nil
}

func encodeFloat64(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendCode8(b, codeDouble, math.Float64bits(*(*float64)(p))), nil
}

func encodeString(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendString(b, *(*string)(p))
}

func encodeBytes(b []byte, p unsafe.Pointer) ([]byte, error) {
	return appendBytes(b, *(*[]byte)(p))
}

// The decoders of the scalar kinds. Each accepts what the library's decoder
// for that kind accepts (any integer width, nil as the zero value, ...) and
// returns errSlow for the rest, whose error the library then gives.

// decodeAs makes the decoder of a kind from the reader of its values.
func decodeAs[V any](read func(*decoder) (V, error)) func(*decoder, unsafe.Pointer) error {
	return func(d *decoder, p unsafe.Pointer) error {
		v, err := read(d)
		if err != nil {
			return err
		}
		*(*V)(p) = v
		return nil
	}
}

// decodeInt decodes any integer kind: the library reads every integer as an
// int64 (or the same bits as a uint64) and truncates it to the field's width.
func decodeInt[I ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](d *decoder, p unsafe.Pointer) error {
	n, err := d.readInt()
	if err != nil {
		return err
	}
	*(*I)(p) = I(n)
	return nil
}
