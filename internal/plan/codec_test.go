package plan

import (
	"reflect"
	"strings"
	"testing"
)

// event is a record type the record codec compiles.
type event struct {
	Key string `msgpack:"k"`
	Seq int64  `msgpack:"i"`
}

// TestMsgpackCodecRoundTrip: compiled and library-encoded record types come
// back as they went, also when decoded repeatedly into recycled batches.
func TestMsgpackCodecRoundTrip(t *testing.T) {
	pool := NewPool[event]()
	ev := MsgpackCodec[event]{Pool: pool}
	in := Records[event]{{"k1", 1}, {"k2", -300}, {"k1", 1 << 40}}
	for range 3 {
		data, err := ev.AppendBatch(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ev.DecodeBatch(data)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := RecordsOf[event](out); !reflect.DeepEqual([]event(got), []event(in)) {
			t.Fatalf("decoded %v, want %v", got, in)
		}
		pool.Recycle(out)
	}
	maps := MsgpackCodec[map[string]int]{}
	mrecs := Records[map[string]int]{{"a": 1}, {"b": 2}}
	data, err := maps.AppendBatch(nil, mrecs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := maps.DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := RecordsOf[map[string]int](out); !reflect.DeepEqual([]map[string]int(got), []map[string]int(mrecs)) {
		t.Fatalf("decoded %v, want %v", got, mrecs)
	}
}

// TestMsgpackCodecRejectsBadInput: a batch that claims more than it holds is
// an error for compiled and library-decoded types alike, before anything
// allocates what the header claims.
func TestMsgpackCodecRejectsBadInput(t *testing.T) {
	huge := []byte{0xdd, 0xff, 0xff, 0xff, 0xff} // an array of 4G records, then nothing
	if _, err := (MsgpackCodec[event]{}).DecodeBatch(huge); err == nil || !strings.Contains(err.Error(), "decode batch") {
		t.Fatalf("compiled type: err %v, want a decode error", err)
	}
	if _, err := (MsgpackCodec[map[string]int]{}).DecodeBatch(huge); err == nil || !strings.Contains(err.Error(), "decode batch") {
		t.Fatalf("library type: err %v, want a decode error", err)
	}
	padded := append([]byte{0x91, 0x80}, 0xc1) // [{}] and a trailing byte
	if _, err := (MsgpackCodec[map[string]int]{}).DecodeBatch(padded); err == nil {
		t.Fatal("library type with a trailing byte: decoded, want an error")
	}
}
