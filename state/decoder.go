package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// decoder is a msgpack decoder together with the input and the reader it
// consumes, so lengths read from the input can be checked against the bytes
// left and keys can be copied out of the input in bulk.
type decoder struct {
	*msgpack.Decoder
	r     *bytes.Reader
	data  []byte    // what r reads
	arena byteArena // where decoded keys, strings and bytes live, unless alias
	// alias makes decoded keys, strings and bytes point into data instead
	// of the arena: the caller hands data over for good (see keepInput).
	alias bool
}

// newDecoderOf returns a decoder reading data; with keep the decoded
// strings and byte slices point into data, which the caller must then never
// change or reuse.
func newDecoderOf(data []byte, keep keepInput) *decoder {
	r := bytes.NewReader(data)
	return &decoder{Decoder: newDecoder(r), r: r, data: data, alias: bool(keep)}
}

// keepInput says whether a restore hands its input bytes over to the
// decoded state (they then back its keys and values, and the caller neither
// changes nor reuses them) or keeps them (the state copies what it needs).
type keepInput bool

// The two ways of restoring from a buffer.
const (
	copyInput  keepInput = false // the caller reuses the buffer: decode copies
	adoptInput keepInput = true  // the buffer is the state's from now on
)

// str reads a string as msgpack's DecodeString does (a string, binary or
// nil), copying it into the decoder's arena or, with alias, pointing into
// the input.
func (d *decoder) str() (string, error) {
	left := d.r.Len()
	b, err := d.rawBytes()
	if err != nil || len(b) == 0 {
		return "", err
	}
	if d.alias {
		return unsafe.String(&b[0], len(b)), nil
	}
	return d.arena.string(b, left), nil
}

// bytes reads a byte slice as msgpack's DecodeBytes does (nil for nil,
// empty but not nil for empty), copying it into the decoder's arena or,
// with alias, pointing into the input (its capacity ends where it does, so
// appending copies and regions never overlap).
func (d *decoder) bytes() ([]byte, error) {
	left := d.r.Len()
	b, err := d.rawBytes()
	if err != nil || b == nil || d.alias {
		return b, err
	}
	return d.arena.bytes(b, left), nil
}

// rawBytes reads a msgpack string or binary and returns its bytes in the
// input without copying them: nil for msgpack's nil, empty but not nil for
// an empty one.
func (d *decoder) rawBytes() ([]byte, error) {
	off := len(d.data) - d.r.Len()
	if off >= len(d.data) {
		return nil, io.EOF
	}
	c, hdr, n := d.data[off], 1, 0
	switch {
	case c == msgpcode.Nil:
		_, err := d.r.Seek(1, io.SeekCurrent)
		return nil, err
	case msgpcode.IsFixedString(c):
		n = int(c & msgpcode.FixedStrMask)
	case c == msgpcode.Str8 || c == msgpcode.Bin8:
		hdr = 2
	case c == msgpcode.Str16 || c == msgpcode.Bin16:
		hdr = 3
	case c == msgpcode.Str32 || c == msgpcode.Bin32:
		hdr = 5
	default:
		return nil, fmt.Errorf("msgpack: invalid code=%x decoding string/bytes length", c)
	}
	if off+hdr > len(d.data) {
		return nil, io.ErrUnexpectedEOF
	}
	switch hdr {
	case 2:
		n = int(d.data[off+1])
	case 3:
		n = int(binary.BigEndian.Uint16(d.data[off+1:]))
	case 5:
		n = int(binary.BigEndian.Uint32(d.data[off+1:]))
	}
	start := off + hdr
	if n < 0 || n > len(d.data)-start {
		return nil, io.ErrUnexpectedEOF
	}
	if _, err := d.r.Seek(int64(hdr+n), io.SeekCurrent); err != nil {
		return nil, err
	}
	return d.data[start : start+n : start+n], nil
}

// checkLen rejects a length that cannot fit in the remaining input (every
// element takes at least one byte), so garbage cannot make us allocate.
func (d *decoder) checkLen(n int) error {
	if n > d.r.Len() {
		return fmt.Errorf("length %d exceeds the %d bytes left", n, d.r.Len())
	}
	return nil
}
