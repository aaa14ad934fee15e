package actors

import (
	"math"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/transport"
)

// TestUnmarshalDataMatchesLibrary: every data body encode writes is read by
// the hand-written path, to what the library reads; other bodies fall back.
func TestUnmarshalDataMatchesLibrary(t *testing.T) {
	var codec plan.MsgpackCodec[int64]
	for _, seq := range []uint64{1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		for _, n := range []int{1, 15, 16, 70000} {
			recs := make(plan.Records[int64], n)
			for i := range recs {
				recs[i] = int64(i) * -7
			}
			raw, err := codec.AppendBatch(nil, recs)
			if err != nil {
				t.Fatal(err)
			}
			payload, err := msgpack.Marshal(&wireBody{K: kData, Seq: seq, Records: raw})
			if err != nil {
				t.Fatal(err)
			}
			fast, ok := unmarshalData(payload)
			if !ok {
				t.Fatalf("seq %d, %d records: the data body was not read by hand", seq, n)
			}
			var lib wireBody
			if err := msgpack.Unmarshal(payload, &lib); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*fast, lib) {
				t.Fatalf("seq %d, %d records: hand-read body differs from the library's", seq, n)
			}
		}
	}
	for _, other := range []wireBody{
		{K: kCredit, N: 2, Output: 1, Channel: 3},
		{K: kData, Records: []byte{0x90}}, // seq 0 is omitted: two keys
		{K: kBarrier, ID: 3, LastSeq: 9, Records: []byte{0x90}},
		{K: "datum", Seq: 3, Records: []byte{0x90}},
	} {
		payload, _ := msgpack.Marshal(&other)
		if _, ok := unmarshalData(payload); ok {
			t.Fatalf("%+v was read as a data body", other)
		}
		b, err := unmarshalBody(payload)
		if err != nil || !reflect.DeepEqual(*b, other) {
			t.Fatalf("%+v: fallback gave %+v, %v", other, b, err)
		}
	}
}

// FuzzUnmarshalData: on any input that passes the envelope's payload check
// the hand-written path either declines or agrees with the library.
func FuzzUnmarshalData(f *testing.F) {
	good, _ := msgpack.Marshal(&wireBody{K: kData, Seq: 300, Records: []byte{0x92, 1, 2}})
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Fuzz(func(t *testing.T, p []byte) {
		if transport.CheckMsgpack(p) != nil {
			return // FromMsg drops it before any decoding
		}
		fast, ok := unmarshalData(p)
		if !ok {
			return
		}
		var lib wireBody
		if err := msgpack.Unmarshal(p, &lib); err != nil {
			t.Fatalf("hand-read % x, the library fails: %v", p, err)
		}
		if !reflect.DeepEqual(*fast, lib) {
			t.Fatalf("% x: hand-read %+v, library %+v", p, *fast, lib)
		}
	})
}
