package recordcodec

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"
)

// manyFields is the field count from which key lookup uses a map instead of
// a linear scan.
const manyFields = 8

// inlineClass says which fields structCodec.decode reads inline.
type inlineClass uint8

const (
	inlineNone   inlineClass = iota
	inlineInt                // any integer kind; structField.size is its width
	inlineString             // a string kind
)

// structField is one encoded field of a struct codec.
type structField struct {
	name   string
	off    uintptr
	kind   reflect.Kind // for the kinds encoded inline
	inline inlineClass  // for the kinds decoded inline
	size   uint8        // the field's size in bytes, for inlineInt
	key    []byte       // the field name msgpack-encoded, as the library writes it
	codec  valueCodec
	// For keys of at most 8 encoded bytes: the key as a little-endian word
	// and the mask of its bytes, to match or write it with one 8-byte access.
	keyWord, keyMask uint64
}

// structCodec encodes a struct as the library does by default: a map from
// field name to value, fields in declaration order.
type structCodec struct {
	typ    reflect.Type
	header []byte // the map header
	fields []structField
	byName map[string]int // for structs of manyFields fields or more
	// minSize is the fewest bytes a struct takes encoded.
	minSize int
}

// codec returns s as a valueCodec.
func (s *structCodec) codec() valueCodec {
	return valueCodec{enc: s.encode, dec: s.decode, minSize: s.minSize}
}

// compileStruct builds the codec of struct type t.
func compileStruct(t reflect.Type) (*structCodec, error) {
	if it, ok := customCoding(t); ok {
		return nil, fmt.Errorf("%s implements %s", t, it)
	}
	infos, err := structFields(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	s := &structCodec{typ: t, header: appendMapHeader(nil, len(infos))}
	minSize := len(s.header)
	for _, fi := range infos {
		c, err := compile(fi.typ)
		if err != nil {
			return nil, fmt.Errorf("%s field %s: %w", t, fi.goName, err)
		}
		key, err := appendString(nil, fi.name)
		if err != nil {
			return nil, fmt.Errorf("%s field %s: %w", t, fi.goName, err)
		}
		f := structField{name: fi.name, off: fi.off, kind: fi.typ.Kind(), key: key, codec: c}
		switch f.kind {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.inline, f.size = inlineInt, uint8(fi.typ.Size())
		case reflect.String:
			f.inline = inlineString
		}
		if len(key) <= 8 {
			var w [8]byte
			copy(w[:], key)
			f.keyWord = binary.LittleEndian.Uint64(w[:])
			f.keyMask = ^uint64(0) >> (64 - 8*len(key))
		}
		s.fields = append(s.fields, f)
		minSize += len(key) + c.minSize
	}
	if len(s.fields) >= manyFields {
		s.byName = make(map[string]int, len(s.fields))
		for i, f := range s.fields {
			s.byName[f.name] = i
		}
	}
	s.minSize = minSize
	return s, nil
}

// encode appends the struct at p.
func (s *structCodec) encode(b []byte, p unsafe.Pointer) ([]byte, error) {
	b = append(b, s.header...)
	for i := range s.fields {
		f := &s.fields[i]
		if f.keyMask != 0 && cap(b)-len(b) >= 8 {
			// Write the key as one word; the bytes past it are overwritten next.
			binary.LittleEndian.PutUint64(b[len(b):len(b)+8], f.keyWord)
			b = b[:len(b)+len(f.key)]
		} else {
			b = append(b, f.key...)
		}
		q := unsafe.Add(p, f.off)
		// The common kinds inline; the rest through their encodeFunc.
		switch f.kind {
		case reflect.Int64:
			if v := *(*int64)(q); v >= 0 {
				b = appendCompactUint(b, uint64(v))
			} else {
				b = appendCompactInt(b, v)
			}
			continue
		case reflect.String:
			if v := *(*string)(q); len(v) < 32 {
				b = append(append(b, fixStrLow|byte(len(v))), v...)
				continue
			}
		}
		var err error
		if b, err = f.codec.enc(b, q); err != nil {
			return b, inField(f.name, err)
		}
	}
	return b, nil
}

// decode decodes a map into the struct at p as the library's decodeStruct
// does: keys in any order, unknown keys skipped, a repeated key decoded
// again over the first, nil zeroes the struct. Array-encoded structs are
// left to the library.
//
// Input written by AppendBatch or msgpack.Marshal (fixmap, keys in
// declaration order, integers of any width in integer fields, fixstr in
// string fields) is read inline with the position in a local; everything
// else (nil, other types, truncated values...) goes through the decoder's
// general readers, so results and errors are theirs.
func (s *structCodec) decode(d *decoder, p unsafe.Pointer) error {
	data, pos := d.data, d.pos
	var n int
	if pos < len(data) && data[pos]&0xf0 == fixMapLow {
		n = int(data[pos] & 0x0f)
		pos++
	} else {
		var err error
		if n, err = d.readMapLen(); err != nil {
			return err
		}
		if n < 0 {
			// Rare: reflect is fine here, and zeroes with the write
			// barriers the garbage collector needs.
			reflect.NewAt(s.typ, p).Elem().SetZero()
			return nil
		}
		pos = d.pos
	}
	fields := s.fields
	for i := range n {
		var f *structField
		if i < len(fields) {
			// The key the library writes at this position?
			f = &fields[i]
			if f.keyMask != 0 && len(data)-pos >= 8 {
				if binary.LittleEndian.Uint64(data[pos:])&f.keyMask != f.keyWord {
					f = nil
				}
			} else if len(data)-pos < len(f.key) || string(data[pos:pos+len(f.key)]) != string(f.key) {
				f = nil
			}
			if f != nil {
				pos += len(f.key)
			}
		}
		if f == nil {
			d.pos = pos
			name, err := s.readKey(d)
			if err != nil {
				return err
			}
			if f = s.field(name); f == nil {
				if d.pos, err = skipValue(data, d.pos); err != nil {
					return inField(string(name), err)
				}
				pos = d.pos
				continue
			}
			pos = d.pos
		}
		q := unsafe.Add(p, f.off)
	inline:
		switch f.inline {
		case inlineInt:
			// What decoder.intAfter reads, for the forms it reads, when
			// there are 8 bytes after the code: the payload is then the
			// top 1, 2, 4 or 8 bytes of one big-endian load, shifted down
			// (arithmetically for the signed forms, which sign-extends;
			// uint64 wraps). Each form advances pos by a constant, so the
			// next read waits on a predicted branch, not on this value.
			// Anything else (nil, other types, the end of the data) is
			// left to the general reader.
			if len(data)-pos <= 8 {
				break
			}
			word := binary.BigEndian.Uint64(data[pos+1:])
			var v int64
			if c := data[pos]; c <= 0x7f || c >= negFixLow {
				v = int64(int8(c))
				pos++
			} else {
				switch c { // dense: a jump table
				case codeUint8:
					v, pos = int64(word>>56), pos+2
				case codeUint16:
					v, pos = int64(word>>48), pos+3
				case codeUint32:
					v, pos = int64(word>>32), pos+5
				case codeUint64:
					v, pos = int64(word), pos+9
				case codeInt8:
					v, pos = int64(word)>>56, pos+2
				case codeInt16:
					v, pos = int64(word)>>48, pos+3
				case codeInt32:
					v, pos = int64(word)>>32, pos+5
				case codeInt64:
					v, pos = int64(word), pos+9
				default:
					break inline
				}
			}
			// Truncated to the field's width, as decodeInt does.
			if f.size == 8 {
				*(*uint64)(q) = uint64(v)
			} else if f.size == 4 {
				*(*uint32)(q) = uint32(v)
			} else if f.size == 2 {
				*(*uint16)(q) = uint16(v)
			} else {
				*(*uint8)(q) = uint8(v)
			}
			continue
		case inlineString:
			if pos < len(data) && data[pos]&0xe0 == fixStrLow {
				if l := int(data[pos] & 0x1f); l < len(data)-pos {
					*(*string)(q) = d.strs.str(data[pos+1 : pos+1+l])
					pos += 1 + l
					continue
				}
			}
		}
		d.pos = pos
		if err := f.codec.dec(d, q); err != nil {
			return inField(f.name, err)
		}
		pos = d.pos
	}
	d.pos = pos
	return nil
}

// readKey reads a map key as the library's decodeStringTemp does (str, bin,
// or nil as ""), aliasing data.
func (s *structCodec) readKey(d *decoder) ([]byte, error) {
	if d.pos < len(d.data) {
		if c := d.data[d.pos]; c >= fixStrLow && c <= fixStrLow|0x1f {
			d.pos++
			return d.take(int(c & 0x1f))
		}
	}
	b, _, err := d.readRaw()
	return b, err
}

// field finds the field named name, nil if there is none.
func (s *structCodec) field(name []byte) *structField {
	if s.byName != nil {
		if j, ok := s.byName[string(name)]; ok {
			return &s.fields[j]
		}
		return nil
	}
	for j := range s.fields {
		if string(name) == s.fields[j].name {
			return &s.fields[j]
		}
	}
	return nil
}
