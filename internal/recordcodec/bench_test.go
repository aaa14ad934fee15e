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

// reportPerRecord reports the time a record over the benchmark's records
// and, when wire is not zero, the encoded bytes a record of a wire-byte
// batch.
func reportPerRecord(b *testing.B, records, wire int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
	if wire > 0 {
		b.ReportMetric(float64(wire)/float64(records), "bytes/record")
	}
}

// BenchmarkCodec encodes and decodes a batch of 4096 events with the
// compiled codec ("recordcodec") and with msgpack.Marshal/Unmarshal
// ("msgpack"), reporting the cost per record of both directions together
// and the encoded size of a record.
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
		reportPerRecord(b, len(recs), len(buf))
	})
	b.Run("msgpack", func(b *testing.B) {
		b.ReportAllocs()
		var size int
		for b.Loop() {
			data, err := msgpack.Marshal(recs)
			if err != nil {
				b.Fatal(err)
			}
			var out []event
			if err := msgpack.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
			size = len(data)
		}
		reportPerRecord(b, len(recs), size)
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
	reportPerRecord(b, len(recs), len(buf))
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
	reportPerRecord(b, len(recs), len(buf))
}

// BenchmarkCodecDecodeStrings is BenchmarkCodecDecode interning the keys
// through one Strings, into a new batch ("fresh") and into a recycled one
// ("recycled"), which is then free of allocations.
func BenchmarkCodecDecodeStrings(b *testing.B) {
	recs := benchEvents()
	c, _ := For[event]()
	buf, err := c.AppendBatch(nil, recs)
	if err != nil {
		b.Fatal(err)
	}
	for _, recycled := range []bool{false, true} {
		name := "fresh"
		if recycled {
			name = "recycled"
		}
		b.Run(name, func(b *testing.B) {
			strs := new(Strings)
			var out []event
			b.ReportAllocs()
			for b.Loop() {
				var dst []event
				if recycled {
					dst = out
				}
				if out, err = c.DecodeBatchWith(dst, buf, strs); err != nil {
					b.Fatal(err)
				}
			}
			reportPerRecord(b, len(recs), len(buf))
		})
	}
}
