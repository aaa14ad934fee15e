package plan

import (
	"testing"
)

type benchEvent struct {
	Key string `msgpack:"k"`
	Seq int64  `msgpack:"i"`
}

// BenchmarkBatchCodec encodes and decodes batches of 4096 small records, as
// a buffer that crosses nodes is.
func BenchmarkBatchCodec(b *testing.B) {
	recs := make(Records[benchEvent], 4096)
	for i := range recs {
		recs[i] = benchEvent{Key: "k000042", Seq: int64(i)}
	}
	// As on the wire: the sender reuses its buffer, the receiver decodes
	// into batches its consumers recycled.
	c := MsgpackCodec[benchEvent]{Pool: NewPool[benchEvent]()}
	var data []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		data, err = c.AppendBatch(data[:0], recs)
		if err != nil {
			b.Fatal(err)
		}
		got, err := c.DecodeBatch(data)
		if err != nil {
			b.Fatal(err)
		}
		c.Pool.Recycle(got)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
