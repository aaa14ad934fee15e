package actors

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/recordcodec"
	"github.com/weirstream/weir/transport"
)

// unmarshalBody decodes a message body from the wire. Data messages, the
// bulk of the traffic, are read by hand: the library finds the extent of
// the records by skipping through them value by value, allocating as it
// goes, which cost more than decoding the records themselves. Every other
// body, and any data body in an unexpected form, goes through the library.
//
// A buffer's payload arrives unwalked (transport.FromMsgUnwalked): the data
// form is read here with bounds-checked readers and its records by the
// batch codec, which checks what it reads; anything else is checked with
// transport.CheckMsgpack before the library, which trusts declared lengths,
// sees it.
func unmarshalBody(payload []byte) (*wireBody, error) {
	if b, ok := unmarshalData(payload); ok {
		return b, nil
	}
	if err := transport.CheckMsgpack(payload); err != nil {
		return nil, err
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
// writes them, they run to the end of the payload and are not walked
// here (the batch codec walks them as it decodes).
func unmarshalData(p []byte) (b *wireBody, ok bool) {
	r := recordcodec.NewReader(p)
	n, err := r.MapLen()
	if err != nil || n != 3 {
		return nil, false
	}
	b = &wireBody{}
	for i := range n {
		key, err := r.String()
		if err != nil {
			return nil, false
		}
		switch key {
		case "k":
			if b.K, err = r.String(); err != nil || b.K != kData {
				return nil, false
			}
		case "seq":
			seq, err := r.Int()
			if err != nil {
				return nil, false
			}
			b.Seq = uint64(seq)
		case "records":
			if i == n-1 {
				b.Records = msgpack.RawMessage(p[r.Pos():])
				return b, b.K == kData
			}
			// Records before another key: the rare form that needs a walk.
			return nil, false
		default:
			return nil, false
		}
	}
	return nil, false
}
