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
	var c MsgpackCodec[benchEvent]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		data, err := c.EncodeBatch(recs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.DecodeBatch(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
