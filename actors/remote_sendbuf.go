package actors

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"
)

// sendBuf is one sender's scratch space for encoding messages to another
// node: the records of a data message and the whole body. NATS copies a
// message as it publishes it, so both are reused for the next message and a
// steady stream of buffers allocates nothing here. It belongs to one
// goroutine (a stand-in actor).
type sendBuf struct {
	records []byte
	body    bytes.Buffer
	enc     *msgpack.Encoder
}

func newSendBuf() *sendBuf {
	b := &sendBuf{}
	b.enc = msgpack.NewEncoder(&b.body)
	return b
}

// marshal encodes body as msgpack.Marshal does; with a nil sendBuf the bytes
// are freshly allocated, else they are valid until b's next use.
func (b *sendBuf) marshal(body *wireBody) ([]byte, error) {
	if b == nil {
		return msgpack.Marshal(body)
	}
	b.body.Reset()
	if err := b.enc.Encode(body); err != nil {
		return nil, err
	}
	return b.body.Bytes(), nil
}
