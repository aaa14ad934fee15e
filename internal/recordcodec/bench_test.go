package recordcodec

import (
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// benchEvents is a batch of 4096 records of the event shape.
func benchEvents() []event {
	recs := make([]event, 4096)
	for i := range recs {
		recs[i] = event{Key: fmt.Sprintf("k%06d", i%1000), Seq: int64(i)}
	}
	return recs
}

// BenchmarkCodec encodes and decodes a batch of 4096 events with the
// compiled codec ("recordcodec") and with msgpack.Marshal/Unmarshal
// ("msgpack"), reporting the cost per record of both directions together.
func BenchmarkCodec(b *testing.B) {
	recs := benchEvents()
	b.Run("recordcodec", func(b *testing.B) {
		c, ok := For[event]()
		if !ok {
			b.Fatal("event is not supported")
		}
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			var err error
			buf, err = c.AppendBatch(buf[:0], recs)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.DecodeBatch(buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
	})
	b.Run("msgpack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := msgpack.Marshal(recs)
			if err != nil {
				b.Fatal(err)
			}
			var out []event
			if err := msgpack.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
	})
}

// BenchmarkCodecEncode and BenchmarkCodecDecode split BenchmarkCodec's
// recordcodec case into its two directions.
func BenchmarkCodecEncode(b *testing.B) {
	recs := benchEvents()
	c, _ := For[event]()
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = c.AppendBatch(buf[:0], recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

func BenchmarkCodecDecode(b *testing.B) {
	recs := benchEvents()
	c, _ := For[event]()
	buf, err := c.AppendBatch(nil, recs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.DecodeBatch(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
