package state

import (
	"bytes"
	"encoding"
	"reflect"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// The interfaces through which msgpack lets a type encode itself.
var ownEncoders = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](),
	reflect.TypeFor[msgpack.Marshaler](),
	reflect.TypeFor[encoding.BinaryMarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](),
}

// encodesItself reports whether msgpack encodes t (or *t) with a method of
// t's rather than by its kind.
func encodesItself(t reflect.Type) bool { return implementsAny(t, ownEncoders) }

// hasIsZero reports whether t (or *t) has the IsZero method through which
// msgpack decides whether an omitempty field is left out.
func hasIsZero(t reflect.Type) bool {
	return implementsAny(t, []reflect.Type{reflect.TypeFor[interface{ IsZero() bool }]()})
}

// plainEncoderFor returns an encoder of struct type T that writes the bytes
// msgpack's reflection encoder writes for it with the state's encoder
// options (encBuf): a map of the fields by name in their order, a field
// tagged omitempty left out when it is zero or empty, each value as msgpack
// encodes its kind, appended at the field's offset (plainAppenderFor)
// without looking the type up per value. Nil when plainAppenderFor is.
func plainEncoderFor[T any]() encodeFunc[T] {
	app := plainAppenderFor[T]()
	if app == nil {
		return nil
	}
	return func(e *msgpack.Encoder, v T) error { return encodeAppended(e, app, v) }
}

// plainAppenderFor returns the appender of plain struct type T's encoding
// (plainEncoderFor). Nil when T is not plain (plainStructFor), when it or a
// field encodes itself or a field has an IsZero method, or when any of a
// few samples encodes differently from msgpack's (as when T was given a
// codec of its own with msgpack.Register).
func plainAppenderFor[T any]() appendFunc[T] {
	s := plainStructFor[T]()
	if s == nil || encodesItself(reflect.TypeFor[T]()) {
		return nil
	}
	for _, f := range s.fields {
		if encodesItself(f.typ) || hasIsZero(f.typ) {
			return nil
		}
	}
	app := func(b []byte, v T) []byte { return s.appendTo(b, unsafe.Pointer(&v)) }
	if !encodesAsMsgpack(s, func(e *msgpack.Encoder, v T) error { return encodeAppended(e, app, v) }) {
		return nil
	}
	return app
}

// encodesAsMsgpack compares enc with msgpack's reflection encoder on samples
// of T: every field zero, every field set, and each field alone set.
func encodesAsMsgpack[T any](s *plainStruct, enc encodeFunc[T]) bool {
	samples := make([]T, 2+len(s.fields))
	fill(s, unsafe.Pointer(&samples[1]), -1)
	for i := range s.fields {
		fill(s, unsafe.Pointer(&samples[2+i]), i)
	}
	var ours, theirs encBuf
	for _, v := range samples {
		if enc(ours.reset(), v) != nil || theirs.reset().Encode(&v) != nil || !bytes.Equal(ours.buf.Bytes(), theirs.buf.Bytes()) {
			return false
		}
	}
	return true
}

// fill sets field only of the struct at p (-1: every field) to a value
// that is not its zero, of a size that needs more than msgpack's smallest
// encoding of its kind.
func fill(s *plainStruct, p unsafe.Pointer, only int) {
	for i, f := range s.fields {
		if only >= 0 && i != only {
			continue
		}
		v := reflect.NewAt(f.typ, unsafe.Add(p, f.off)).Elem()
		switch f.kind {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(-100 - int64(i))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(200 + uint64(i))
		case reflect.Float32, reflect.Float64:
			v.SetFloat(0.25 + float64(i))
		case reflect.String:
			v.SetString(f.name + string(make([]byte, 40)))
		case reflect.Slice:
			v.SetBytes(append([]byte(f.name), make([]byte, 40)...))
		}
	}
}

// appendTo appends the struct at p as a msgpack map (see plainEncoderFor).
func (s *plainStruct) appendTo(b []byte, p unsafe.Pointer) []byte {
	n := len(s.fields)
	if s.omits {
		for i := range s.fields {
			if s.fields[i].omitted(unsafe.Add(p, s.fields[i].off)) {
				n--
			}
		}
	}
	b = appendMapLen(b, n)
	for i := range s.fields {
		f := &s.fields[i]
		fp := unsafe.Add(p, f.off)
		if f.omitted(fp) {
			continue
		}
		b = append(b, f.key...)
		b = f.appendTo(b, fp)
	}
	return b
}

// omitted reports whether the field at p is left out: tagged omitempty and
// zero, false, or empty, as msgpack decides.
func (f *plainField) omitted(p unsafe.Pointer) bool {
	if !f.omit {
		return false
	}
	switch f.kind {
	case reflect.Bool:
		return !*(*bool)(p)
	case reflect.String:
		return len(*(*string)(p)) == 0
	case reflect.Slice:
		return len(*(*[]byte)(p)) == 0
	case reflect.Float32:
		return *(*float32)(p) == 0
	case reflect.Float64:
		return *(*float64)(p) == 0
	}
	return intAt(f.kind, p) == 0
}

// appendTo appends the field's value at p as msgpack encodes its kind
// under compact ints.
func (f *plainField) appendTo(b []byte, p unsafe.Pointer) []byte {
	switch f.kind {
	case reflect.Bool:
		return appendBool(b, *(*bool)(p))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return appendInt(b, intAt(f.kind, p))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return appendUint(b, uint64(intAt(f.kind, p)))
	case reflect.Float32:
		return appendFloat32(b, *(*float32)(p))
	case reflect.Float64:
		return appendFloat64(b, *(*float64)(p))
	case reflect.String:
		return appendString(b, *(*string)(p))
	}
	return appendBytes(b, *(*[]byte)(p))
}

// intAt reads an integer of kind k at p, unsigned kinds as their bits.
func intAt(k reflect.Kind, p unsafe.Pointer) int64 {
	switch k {
	case reflect.Int:
		return int64(*(*int)(p))
	case reflect.Int8:
		return int64(*(*int8)(p))
	case reflect.Int16:
		return int64(*(*int16)(p))
	case reflect.Int32:
		return int64(*(*int32)(p))
	case reflect.Int64:
		return *(*int64)(p)
	case reflect.Uint:
		return int64(*(*uint)(p))
	case reflect.Uint8:
		return int64(*(*uint8)(p))
	case reflect.Uint16:
		return int64(*(*uint16)(p))
	case reflect.Uint32:
		return int64(*(*uint32)(p))
	case reflect.Uint64:
		return int64(*(*uint64)(p))
	}
	return 0
}
