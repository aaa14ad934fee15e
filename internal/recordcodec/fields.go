package recordcodec

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// fieldInfo is one struct field the library encodes.
type fieldInfo struct {
	name   string       // the msgpack key
	goName string       // the Go field name, for errors
	off    uintptr      // offset in the struct
	typ    reflect.Type // the field's type
}

// structFields lists the fields msgpack/v5 encodes for struct type t, in its
// order, with its names: the msgpack tag's name, else the Go name; "-" and
// unexported fields are left out (getFields in the library's types.go). It
// fails for what it does not reproduce: tag options (omitempty, as_array,
// inline, alias, intern...), quoting in tags, embedded fields and two fields
// with one name.
func structFields(t reflect.Type) ([]fieldInfo, error) {
	var out []fieldInfo
	seen := make(map[string]string)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("msgpack")
		if tag == "-" {
			continue
		}
		if strings.ContainsAny(tag, ",:'\\(") || tag != strings.TrimSpace(tag) {
			return nil, fmt.Errorf("field %s: msgpack tag %q has options or quoting", f.Name, tag)
		}
		if f.Anonymous {
			return nil, fmt.Errorf("field %s: embedded fields are not supported", f.Name)
		}
		if !f.IsExported() {
			continue // the library skips them too
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		if other, dup := seen[name]; dup {
			return nil, fmt.Errorf("fields %s and %s both have the msgpack name %q", other, f.Name, name)
		}
		seen[name] = f.Name
		out = append(out, fieldInfo{name: name, goName: f.Name, off: f.Offset, typ: f.Type})
	}
	return out, nil
}

var customCodingTypes = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](),
	reflect.TypeFor[msgpack.CustomDecoder](),
	reflect.TypeFor[msgpack.Marshaler](),
	reflect.TypeFor[msgpack.Unmarshaler](),
	reflect.TypeFor[encoding.BinaryMarshaler](),
	reflect.TypeFor[encoding.BinaryUnmarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](),
	reflect.TypeFor[encoding.TextUnmarshaler](),
}

// customCoding names the interface through which the library would encode or
// decode t (or *t, for addressable values) instead of by its kind, if any.
func customCoding(t reflect.Type) (reflect.Type, bool) {
	pt := reflect.PointerTo(t)
	for _, it := range customCodingTypes {
		if t.Implements(it) || pt.Implements(it) {
			return it, true
		}
	}
	return nil, false
}
