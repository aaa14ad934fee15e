package inflight

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
)

// AppendFrame appends buffer b as one frame: a msgpack value that decodes
// on its own, so that any run of consecutive frames is channel state a
// later checkpoint can refer to (store.ChannelPart). A frame keeps the
// buffer's records and mark; its place in the channel gives its seq.
func AppendFrame(dst []byte, codec plan.BatchCodec, b Batch) ([]byte, error) {
	data, err := codec.AppendBatch(nil, b.Records)
	if err != nil {
		return dst, fmt.Errorf("encode captured buffer seq %d: %w", b.Seq, err)
	}
	frame, err := msgpack.Marshal(wireBatch{Data: data, MarkKind: b.MarkKind, MarkAt: b.MarkAt})
	if err != nil {
		return dst, fmt.Errorf("encode captured buffer seq %d: %w", b.Seq, err)
	}
	return append(dst, frame...), nil
}

// DecodeFrames decodes a run of exactly n frames made by AppendFrame,
// numbering the buffers from first on, and returns where each frame ends in
// data. Fewer, more or undecodable frames are ErrCorrupt.
func DecodeFrames(codec plan.BatchCodec, data []byte, n int, first uint64) ([]Batch, []int, error) {
	r := bytes.NewReader(data) // a ByteScanner: the decoder reads no further than each frame
	dec := msgpack.NewDecoder(r)
	out := make([]Batch, 0, n)
	ends := make([]int, 0, n)
	for i := 0; i < n; i++ {
		var w wireBatch
		if err := dec.Decode(&w); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil, fmt.Errorf("channel state run holds %d buffers, want %d: %w", i, n, ErrCorrupt)
			}
			return nil, nil, fmt.Errorf("channel state buffer %d of %d: %v: %w", i+1, n, err, ErrCorrupt)
		}
		recs, err := codec.DecodeBatch(w.Data)
		if err != nil {
			return nil, nil, fmt.Errorf("channel state buffer %d of %d: %v: %w", i+1, n, err, ErrCorrupt)
		}
		out = append(out, Batch{Seq: first + uint64(i), Records: recs, MarkKind: w.MarkKind, MarkAt: w.MarkAt})
		ends = append(ends, len(data)-r.Len())
	}
	if r.Len() > 0 {
		return nil, nil, fmt.Errorf("channel state run has bytes after its %d buffers: %w", n, ErrCorrupt)
	}
	return out, ends, nil
}
