package state

import (
	"encoding"
	"reflect"
	"strings"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// plainStruct decodes a msgpack map into a struct whose fields are all
// plain: exported, not embedded, of a bool, integer, float, string or []byte
// kind, with a msgpack tag that at most renames the field and says
// omitempty, and no decoding method of their own (nor the struct). For
// those msgpack's reflection decodes field by field with its scalar
// decoders, which plainStruct calls directly at the field's offset, without
// looking the type up per value. Anything else in the input (an array, a
// value of another type) is an error, and the caller lets msgpack decode the
// value instead, so the outcome is msgpack's in every case.
type plainStruct struct {
	fields []plainField
	omits  bool // some field is tagged omitempty
}

// plainField is one field of a plainStruct.
type plainField struct {
	name string       // as msgpack names it
	key  []byte       // name's msgpack encoding
	off  uintptr      // in the struct
	kind reflect.Kind // reflect.Slice means []byte
	typ  reflect.Type
	omit bool // tagged omitempty
}

// The interfaces through which msgpack lets a type decode itself.
var ownDecoders = []reflect.Type{
	reflect.TypeFor[msgpack.CustomDecoder](),
	reflect.TypeFor[msgpack.Unmarshaler](),
	reflect.TypeFor[encoding.BinaryUnmarshaler](),
	reflect.TypeFor[encoding.TextUnmarshaler](),
}

// decodesItself reports whether msgpack decodes t (or *t) with a method of
// t's rather than by its kind.
func decodesItself(t reflect.Type) bool { return implementsAny(t, ownDecoders) }

// implementsAny reports whether t or *t implements any of ifaces.
func implementsAny(t reflect.Type, ifaces []reflect.Type) bool {
	for _, i := range ifaces {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// plainKinds are the field kinds plainStruct decodes itself.
var plainKinds = map[reflect.Kind]bool{
	reflect.Bool: true, reflect.Int: true, reflect.Int8: true, reflect.Int16: true, reflect.Int32: true,
	reflect.Int64: true, reflect.Uint: true, reflect.Uint8: true, reflect.Uint16: true, reflect.Uint32: true,
	reflect.Uint64: true, reflect.Float32: true, reflect.Float64: true, reflect.String: true,
}

// plainStructFor returns the decoder of struct type T, or nil when T is not
// plain or msgpack does not round-trip a sample of it through the plain
// decoder to the same value (as when T was given a codec of its own with
// msgpack.Register).
func plainStructFor[T any]() *plainStruct {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct || decodesItself(t) {
		return nil
	}
	s := &plainStruct{}
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous || decodesItself(f.Type) {
			return nil
		}
		kind := f.Type.Kind()
		if kind == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8 {
			kind = reflect.Slice
		} else if !plainKinds[kind] {
			return nil
		}
		name, omit, ok := plainTagName(f)
		if !ok || names[name] {
			return nil
		}
		names[name] = true
		s.fields = append(s.fields, plainField{name: name, key: appendString(nil, name), off: f.Offset, kind: kind, typ: f.Type, omit: omit})
		s.omits = s.omits || omit
	}
	if !roundTrips[T](s) {
		return nil
	}
	return s
}

// plainTagName is the name msgpack gives field f and whether its tag marks
// it omitempty, and false when its tag does more than those.
func plainTagName(f reflect.StructField) (name string, omit, ok bool) {
	tag := f.Tag.Get("msgpack")
	if strings.ContainsAny(tag, " \t:'\"") {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	switch {
	case opts != "" && opts != "omitempty", name == "-":
		return "", false, false
	case name == "":
		return f.Name, opts != "", true
	}
	return name, opts != "", true
}

// roundTrips checks s against msgpack on a sample of T with every field set.
func roundTrips[T any](s *plainStruct) bool {
	var in T
	fill(s, unsafe.Pointer(&in), -1)
	var eb encBuf
	if err := eb.reset().Encode(&in); err != nil {
		return false
	}
	var out T
	d := newDecoderOf(eb.buf.Bytes(), copyInput)
	if err := s.decode(d, unsafe.Pointer(&out)); err != nil || d.r.Len() != 0 {
		return false
	}
	return reflect.DeepEqual(in, out)
}

// decode reads a map into the struct at p, which holds its zero value.
func (s *plainStruct) decode(d *decoder, p unsafe.Pointer) error {
	n, err := d.DecodeMapLen()
	if err != nil {
		return err
	}
	for range n { // a nil map (n = -1) leaves the zero struct, as msgpack does
		name, err := d.rawBytes()
		if err != nil {
			return err
		}
		f := s.field(name)
		if f == nil {
			if err := d.Skip(); err != nil {
				return err
			}
			continue
		}
		if err := f.decode(d, unsafe.Add(p, f.off)); err != nil {
			return err
		}
	}
	return nil
}

// field finds the field named name; nil when there is none.
func (s *plainStruct) field(name []byte) *plainField {
	for i := range s.fields {
		if s.fields[i].name == string(name) {
			return &s.fields[i]
		}
	}
	return nil
}

// decode reads the field's value into p with the decoder msgpack uses for
// its kind, converting as reflect's setters do.
func (f *plainField) decode(d *decoder, p unsafe.Pointer) error {
	switch f.kind {
	case reflect.Bool:
		v, err := d.DecodeBool()
		*(*bool)(p) = v
		return err
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v, err := d.DecodeInt64()
		setInt(f.kind, p, v)
		return err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v, err := d.DecodeUint64()
		setInt(f.kind, p, int64(v))
		return err
	case reflect.Float32:
		v, err := d.DecodeFloat32()
		*(*float32)(p) = v
		return err
	case reflect.Float64:
		v, err := d.DecodeFloat64()
		*(*float64)(p) = v
		return err
	case reflect.String:
		v, err := d.str()
		*(*string)(p) = v
		return err
	default: // []byte
		v, err := d.bytes()
		*(*[]byte)(p) = v
		return err
	}
}

// setInt stores v into the integer of kind k at p, truncating as
// reflect.Value.SetInt and SetUint do.
func setInt(k reflect.Kind, p unsafe.Pointer, v int64) {
	switch k {
	case reflect.Int:
		*(*int)(p) = int(v)
	case reflect.Int8:
		*(*int8)(p) = int8(v)
	case reflect.Int16:
		*(*int16)(p) = int16(v)
	case reflect.Int32:
		*(*int32)(p) = int32(v)
	case reflect.Int64:
		*(*int64)(p) = v
	case reflect.Uint:
		*(*uint)(p) = uint(v)
	case reflect.Uint8:
		*(*uint8)(p) = uint8(v)
	case reflect.Uint16:
		*(*uint16)(p) = uint16(v)
	case reflect.Uint32:
		*(*uint32)(p) = uint32(v)
	case reflect.Uint64:
		*(*uint64)(p) = uint64(v)
	}
}
