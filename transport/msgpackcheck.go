package transport

import (
	"encoding/binary"
	"fmt"
)

// maxPayloadDepth is the deepest nesting of arrays and maps accepted in a
// payload.
const maxPayloadDepth = 100

// CheckMsgpack reports whether b is exactly one complete msgpack value, with
// no trailing bytes and nesting at most maxPayloadDepth deep. It allocates
// nothing and does not recurse.
//
// This check must pass before a payload from the wire reaches a msgpack
// decoder: msgpack v5.4.1 sizes slices and maps from the length a header
// claims (DecodeInterface, DecodeMap and decoding into []T ignore its alloc
// limit), so 5 bytes such as dd ff ff ff ff make it allocate 64 GB and kill
// the process with a fatal, unrecoverable out-of-memory error. In a payload
// that passes, every declared length is backed by at least that many bytes.
func CheckMsgpack(b []byte) error {
	end, err := valueEnd(b, 0)
	if err != nil {
		return err
	}
	if end != len(b) {
		return fmt.Errorf("msgpack: %d trailing bytes after the value", len(b)-end)
	}
	return nil
}

// valueEnd returns the position just past the one complete msgpack value that
// starts at byte start of b, checking, as CheckMsgpack does, every declared
// length against the bytes left and nesting at most maxPayloadDepth deep. It
// allocates nothing and does not recurse.
func valueEnd(b []byte, start int) (int, error) {
	var stack [maxPayloadDepth + 1]uint64 // values still to read per open level
	depth := 0
	stack[0] = 1
	pos := start
	for {
		for depth >= 0 && stack[depth] == 0 {
			depth--
		}
		if depth < 0 {
			break
		}
		stack[depth]--
		if pos >= len(b) {
			return 0, fmt.Errorf("msgpack truncated: value expected at byte %d of %d", pos, len(b))
		}
		c := b[pos]
		start := pos
		pos++
		var skip, count uint64 // bytes to skip; values inside a container
		switch {
		case c <= 0x7f || c >= 0xe0: // fixint
		case c <= 0x8f: // fixmap
			count = 2 * uint64(c&0x0f)
		case c <= 0x9f: // fixarray
			count = uint64(c & 0x0f)
		case c <= 0xbf: // fixstr
			skip = uint64(c & 0x1f)
		default:
			var lenBytes int
			var isLen, isExt, isMap, isArr bool
			switch c {
			case 0xc0, 0xc2, 0xc3: // nil, false, true
			case 0xc1:
				return 0, fmt.Errorf("msgpack: invalid code 0xc1 at byte %d", start)
			case 0xc4, 0xd9: // bin8, str8
				lenBytes, isLen = 1, true
			case 0xc5, 0xda:
				lenBytes, isLen = 2, true
			case 0xc6, 0xdb:
				lenBytes, isLen = 4, true
			case 0xc7: // ext8
				lenBytes, isExt = 1, true
			case 0xc8:
				lenBytes, isExt = 2, true
			case 0xc9:
				lenBytes, isExt = 4, true
			case 0xca, 0xce, 0xd2: // float32, uint32, int32
				skip = 4
			case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
				skip = 8
			case 0xcc, 0xd0:
				skip = 1
			case 0xcd, 0xd1:
				skip = 2
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 (+1 type byte)
				skip = 1 + 1<<(c-0xd4)
			case 0xdc:
				lenBytes, isArr = 2, true
			case 0xdd:
				lenBytes, isArr = 4, true
			case 0xde:
				lenBytes, isMap = 2, true
			case 0xdf:
				lenBytes, isMap = 4, true
			}
			if lenBytes > 0 {
				if len(b)-pos < lenBytes {
					return 0, fmt.Errorf("msgpack truncated: length of code 0x%02x at byte %d", c, start)
				}
				var n uint64
				switch lenBytes {
				case 1:
					n = uint64(b[pos])
				case 2:
					n = uint64(binary.BigEndian.Uint16(b[pos:]))
				case 4:
					n = uint64(binary.BigEndian.Uint32(b[pos:]))
				}
				pos += lenBytes
				switch {
				case isLen:
					skip = n
				case isExt:
					skip = n + 1
				case isArr:
					count = n
				case isMap:
					count = 2 * n
				}
			}
		}
		if skip > uint64(len(b)-pos) {
			return 0, fmt.Errorf("msgpack truncated: code 0x%02x at byte %d needs %d bytes, %d left", c, start, skip, len(b)-pos)
		}
		pos += int(skip)
		if count > 0 {
			if count > uint64(len(b)-pos) {
				return 0, fmt.Errorf("msgpack truncated: container at byte %d declares %d values, only %d bytes left", start, count, len(b)-pos)
			}
			if depth == maxPayloadDepth {
				return 0, fmt.Errorf("msgpack nested deeper than %d at byte %d", maxPayloadDepth, start)
			}
			depth++
			stack[depth] = count
		}
	}
	return pos, nil
}
