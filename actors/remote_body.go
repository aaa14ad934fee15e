package actors

import (
	"encoding/binary"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/transport"
)

// unmarshalBody decodes a message body from the wire. Data messages, the
// bulk of the traffic, are read by hand: the library finds the extent of
// the records by skipping through them value by value, allocating as it
// goes, which cost more than decoding the records themselves. Every other
// body, and any data body in an unexpected form, goes through the library.
//
// The payload must have passed transport.CheckMsgpack (FromMsg checks every
// envelope): it is then one complete value with every length backed by bytes.
func unmarshalBody(payload []byte) (*wireBody, error) {
	if b, ok := unmarshalData(payload); ok {
		return b, nil
	}
	var b wireBody
	if err := msgpack.Unmarshal(payload, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// unmarshalData reads a body that is a map of exactly the keys k ("data"),
// seq and records, as encode writes a data message; ok is false for
// anything else. The records alias payload. When they come last, as encode
// writes them, they run to the end of the checked payload and are not walked
// here (the batch codec walks them as it decodes).
func unmarshalData(p []byte) (b *wireBody, ok bool) {
	n, pos, ok := mapLen(p, 0)
	if !ok || n != 3 {
		return nil, false
	}
	b = &wireBody{}
	for i := range n {
		var key string
		if key, pos, ok = shortString(p, pos); !ok {
			return nil, false
		}
		switch key {
		case "k":
			if b.K, pos, ok = shortString(p, pos); !ok || b.K != kData {
				return nil, false
			}
		case "seq":
			if b.Seq, pos, ok = unsigned(p, pos); !ok {
				return nil, false
			}
		case "records":
			if i == n-1 {
				b.Records, pos = msgpack.RawMessage(p[pos:]), len(p)
				continue
			}
			end, err := transport.ValueEnd(p, pos)
			if err != nil {
				return nil, false
			}
			b.Records, pos = msgpack.RawMessage(p[pos:end]), end
		default:
			return nil, false
		}
	}
	return b, pos == len(p) && b.K == kData && b.Records != nil
}

// mapLen reads a map header at pos.
func mapLen(p []byte, pos int) (n, next int, ok bool) {
	if pos >= len(p) {
		return 0, 0, false
	}
	switch c := p[pos]; {
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), pos + 1, true
	case c == 0xde && pos+3 <= len(p):
		return int(binary.BigEndian.Uint16(p[pos+1:])), pos + 3, true
	}
	return 0, 0, false
}

// shortString reads a fixstr or str8 at pos.
func shortString(p []byte, pos int) (s string, next int, ok bool) {
	if pos >= len(p) {
		return "", 0, false
	}
	c, l := p[pos], 0
	switch {
	case c >= 0xa0 && c <= 0xbf:
		l, pos = int(c&0x1f), pos+1
	case c == 0xd9 && pos+2 <= len(p):
		l, pos = int(p[pos+1]), pos+2
	default:
		return "", 0, false
	}
	if pos+l > len(p) {
		return "", 0, false
	}
	return string(p[pos : pos+l]), pos + l, true
}

// unsigned reads a non-negative integer in any msgpack form at pos.
func unsigned(p []byte, pos int) (v uint64, next int, ok bool) {
	if pos >= len(p) {
		return 0, 0, false
	}
	c := p[pos]
	if c <= 0x7f {
		return uint64(c), pos + 1, true
	}
	size := 0
	switch c {
	case 0xcc:
		size = 1
	case 0xcd:
		size = 2
	case 0xce:
		size = 4
	case 0xcf:
		size = 8
	}
	if size == 0 || pos+1+size > len(p) {
		return 0, 0, false
	}
	for _, x := range p[pos+1 : pos+1+size] {
		v = v<<8 | uint64(x)
	}
	return v, pos + 1 + size, true
}
