package recordcodec

import (
	"encoding/binary"
	"fmt"
)

// maxDepth bounds how deeply nested input may be, in unknown keys the fast
// path skips and in input handed to the library. The library skips unknown
// values recursively, and deep enough nesting would exhaust the goroutine
// stack (a crash, not an error). Records of the supported shapes nest one
// level per struct, so only junk comes near it.
const maxDepth = 10000

// skipValue returns the position just past the complete msgpack value that
// starts at pos. It walks the value iteratively, checks every length against
// the bytes left (so it allocates nothing from a length prefix) and refuses
// nesting deeper than maxDepth.
func skipValue(data []byte, pos int) (int, error) {
	var stackBuf [8]int
	open := stackBuf[:0] // items left in each enclosing container
	left := 1            // items left at the current level
	for {
		if left == 0 {
			if len(open) == 0 {
				return pos, nil
			}
			left = open[len(open)-1]
			open = open[:len(open)-1]
			continue
		}
		left--
		if pos >= len(data) {
			return pos, fmt.Errorf("offset %d: %w", pos, errTruncated)
		}
		start := pos
		c := data[pos]
		pos++
		skip, items, n, err := valueShape(data, pos, c)
		if err != nil {
			return pos, fmt.Errorf("offset %d: %w", start, err)
		}
		pos += n // the length bytes after the code
		if skip > len(data)-pos {
			return pos, fmt.Errorf("offset %d: value of %d bytes: %w", start, skip, errTruncated)
		}
		pos += skip
		if items > 0 {
			// Every item takes at least one byte.
			if items > len(data)-pos {
				return pos, fmt.Errorf("offset %d: %d items announced: %w", start, items, errTruncated)
			}
			if len(open) >= maxDepth {
				return pos, fmt.Errorf("offset %d: nested deeper than %d: %w", start, maxDepth, errMalformed)
			}
			open = append(open, left)
			left = items
		}
	}
}

// valueShape describes the value whose code c was read just before pos: n
// length bytes follow the code, then skip payload bytes, then items nested
// values (two per map entry).
func valueShape(data []byte, pos int, c byte) (skip, items, n int, err error) {
	switch {
	case c <= 0x7f || c >= negFixLow, c == codeNil, c == codeFalse, c == codeTrue:
		return 0, 0, 0, nil
	case c >= fixMapLow && c <= fixMapLow|0x0f:
		return 0, 2 * int(c&0x0f), 0, nil
	case c >= fixArrayLow && c <= fixArrayLow|0x0f:
		return 0, int(c & 0x0f), 0, nil
	case c >= fixStrLow && c <= fixStrLow|0x1f:
		return int(c & 0x1f), 0, 0, nil
	}
	switch c {
	case codeUint8, codeInt8:
		return 1, 0, 0, nil
	case codeUint16, codeInt16:
		return 2, 0, 0, nil
	case codeUint32, codeInt32, codeFloat:
		return 4, 0, 0, nil
	case codeUint64, codeInt64, codeDouble:
		return 8, 0, 0, nil
	case codeFixExt1:
		return 1 + 1, 0, 0, nil
	case codeFixExt2:
		return 1 + 2, 0, 0, nil
	case codeFixExt4:
		return 1 + 4, 0, 0, nil
	case codeFixExt8:
		return 1 + 8, 0, 0, nil
	case codeFixExt16:
		return 1 + 16, 0, 0, nil
	}
	l, n, err := lengthAfter(data, pos, c)
	if err != nil {
		return 0, 0, 0, err
	}
	switch c {
	case codeStr8, codeStr16, codeStr32, codeBin8, codeBin16, codeBin32:
		return l, 0, n, nil
	case codeExt8, codeExt16, codeExt32:
		return l + 1, 0, n, nil // the ext type byte, then the data
	case codeArray16, codeArray32:
		return 0, l, n, nil
	default: // codeMap16, codeMap32
		return 0, 2 * l, n, nil
	}
}

// lengthAfter reads the big-endian length that follows code c at pos and
// says how many bytes it took. 0xc1, the one code msgpack never uses, is
// malformed.
func lengthAfter(data []byte, pos int, c byte) (l, n int, err error) {
	switch c {
	case codeStr8, codeBin8, codeExt8:
		n = 1
	case codeStr16, codeBin16, codeExt16, codeArray16, codeMap16:
		n = 2
	case codeStr32, codeBin32, codeExt32, codeArray32, codeMap32:
		n = 4
	default:
		return 0, 0, fmt.Errorf("code 0x%x: %w", c, errMalformed)
	}
	if n > len(data)-pos {
		return 0, 0, errTruncated
	}
	switch n {
	case 1:
		l = int(data[pos])
	case 2:
		l = int(binary.BigEndian.Uint16(data[pos:]))
	default:
		l = int(binary.BigEndian.Uint32(data[pos:]))
	}
	return l, n, nil
}
