package recordcodec

import "math"

// decoder reads msgpack values from data, checking bounds on every read. It
// never allocates from a length prefix before checking that the bytes are
// there.
type decoder struct {
	data []byte
	pos  int
	// strs, when not nil, interns the strings read (see Strings).
	strs *Strings
}

// readByte returns the next byte.
func (d *decoder) readByte() (byte, error) {
	if d.pos >= len(d.data) {
		return 0, errTruncated
	}
	c := d.data[d.pos]
	d.pos++
	return c, nil
}

// take returns the next n bytes, aliasing data.
func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.data)-d.pos {
		return nil, errTruncated
	}
	b := d.data[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	return b, nil
}

// readUint16 returns the next two bytes as a big-endian number.
func (d *decoder) readUint16() (uint16, error) {
	b, err := d.take(2)
	if err != nil {
		return 0, err
	}
	return uint16(b[0])<<8 | uint16(b[1]), nil
}

// readUint32 returns the next four bytes as a big-endian number.
func (d *decoder) readUint32() (uint32, error) {
	b, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

// readUint64 returns the next eight bytes as a big-endian number.
func (d *decoder) readUint64() (uint64, error) {
	b, err := d.take(8)
	if err != nil {
		return 0, err
	}
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]), nil
}

// readInt reads any msgpack integer, or nil as 0, as the library's
// Decoder.DecodeInt64 does. Unsigned 64-bit values wrap. The library decodes
// every Go integer kind through this and truncates (reflect.Value.SetInt or
// SetUint), and its unsigned reading is the same bits, so all integer fields
// use it.
func (d *decoder) readInt() (int64, error) {
	c, err := d.readByte()
	if err != nil {
		return 0, err
	}
	return d.intAfter(c)
}

// intAfter finishes reading an integer whose code c was just read.
func (d *decoder) intAfter(c byte) (int64, error) {
	if c <= 0x7f || c >= negFixLow {
		return int64(int8(c)), nil
	}
	switch c {
	case codeInt64, codeUint64:
		n, err := d.readUint64()
		return int64(n), err
	case codeNil:
		return 0, nil
	case codeUint8:
		n, err := d.readByte()
		return int64(n), err
	case codeInt8:
		n, err := d.readByte()
		return int64(int8(n)), err
	case codeUint16:
		n, err := d.readUint16()
		return int64(n), err
	case codeInt16:
		n, err := d.readUint16()
		return int64(int16(n)), err
	case codeUint32:
		n, err := d.readUint32()
		return int64(n), err
	case codeInt32:
		n, err := d.readUint32()
		return int64(int32(n)), err
	}
	return 0, errSlow
}

// readBool reads a bool; nil is false.
func (d *decoder) readBool() (bool, error) {
	c, err := d.readByte()
	if err != nil {
		return false, err
	}
	switch c {
	case codeTrue:
		return true, nil
	case codeFalse, codeNil:
		return false, nil
	}
	return false, errSlow
}

// readFloat32 reads a float32, or an integer converted to float32, as
// Decoder.DecodeFloat32 does (a float64 on the wire is an error there).
func (d *decoder) readFloat32() (float32, error) {
	c, err := d.readByte()
	if err != nil {
		return 0, err
	}
	if c == codeFloat {
		n, err := d.readUint32()
		return math.Float32frombits(n), err
	}
	n, err := d.intAfter(c)
	return float32(n), err
}

// readFloat64 reads a float64, a float32 widened, or an integer converted, as
// Decoder.DecodeFloat64 does.
func (d *decoder) readFloat64() (float64, error) {
	c, err := d.readByte()
	if err != nil {
		return 0, err
	}
	switch c {
	case codeDouble:
		n, err := d.readUint64()
		return math.Float64frombits(n), err
	case codeFloat:
		n, err := d.readUint32()
		return float64(math.Float32frombits(n)), err
	}
	n, err := d.intAfter(c)
	return float64(n), err
}

// lenAfter reads the length of a str or bin value whose code c was just
// read; nil gives -1, as in the library's Decoder.bytesLen.
func (d *decoder) lenAfter(c byte) (int, error) {
	if c >= fixStrLow && c <= fixStrLow|0x1f {
		return int(c & 0x1f), nil
	}
	switch c {
	case codeNil:
		return -1, nil
	case codeStr8, codeBin8:
		n, err := d.readByte()
		return int(n), err
	case codeStr16, codeBin16:
		n, err := d.readUint16()
		return int(n), err
	case codeStr32, codeBin32:
		n, err := d.readUint32()
		return int(n), err
	}
	return 0, errSlow
}

// readRaw reads a str or bin value and returns its bytes aliasing data; nil
// gives a nil slice and isNil.
func (d *decoder) readRaw() (b []byte, isNil bool, err error) {
	c, err := d.readByte()
	if err != nil {
		return nil, false, err
	}
	n, err := d.lenAfter(c)
	if err != nil {
		return nil, false, err
	}
	if n < 0 {
		return nil, true, nil
	}
	b, err = d.take(n)
	return b, false, err
}

// readString reads a str or bin value (nil is "") into a string that does
// not alias data: a new one, or one from d.strs.
func (d *decoder) readString() (string, error) {
	if d.pos < len(d.data) {
		if c := d.data[d.pos]; c >= fixStrLow && c <= fixStrLow|0x1f {
			// The common case: a fixstr.
			n := int(c & 0x1f)
			if n < len(d.data)-d.pos {
				s := d.strs.str(d.data[d.pos+1 : d.pos+1+n])
				d.pos += 1 + n
				return s, nil
			}
		}
	}
	b, _, err := d.readRaw()
	if err != nil {
		return "", err
	}
	return d.strs.str(b), nil
}

// readBytes reads a str or bin value into a new slice, as the library's
// Decoder.bytes does for a nil destination: nil stays nil, an empty value is
// an empty non-nil slice.
func (d *decoder) readBytes() ([]byte, error) {
	b, isNil, err := d.readRaw()
	if err != nil || isNil {
		return nil, err
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out, nil
}

// readMapLen reads a map header; nil gives -1. Anything else is errSlow: an
// array-encoded struct or a type error, both left to the library.
func (d *decoder) readMapLen() (int, error) {
	c, err := d.readByte()
	if err != nil {
		return 0, err
	}
	if c >= fixMapLow && c <= fixMapLow|0x0f {
		return int(c & 0x0f), nil
	}
	switch c {
	case codeNil:
		return -1, nil
	case codeMap16:
		n, err := d.readUint16()
		return int(n), err
	case codeMap32:
		n, err := d.readUint32()
		return int(n), err
	}
	return 0, errSlow
}

// readArrayLen reads an array header; nil gives -1; anything else errSlow.
func (d *decoder) readArrayLen() (int, error) {
	c, err := d.readByte()
	if err != nil {
		return 0, err
	}
	if c >= fixArrayLow && c <= fixArrayLow|0x0f {
		return int(c & 0x0f), nil
	}
	switch c {
	case codeNil:
		return -1, nil
	case codeArray16:
		n, err := d.readUint16()
		return int(n), err
	case codeArray32:
		n, err := d.readUint32()
		return int(n), err
	}
	return 0, errSlow
}
