package recordcodec

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

type intoRec struct {
	K string `msgpack:"k"`
	N int64  `msgpack:"n"`
}

// TestDecodeBatchIntoReusesAndClears: decoding into a recycled batch with
// room reuses its array and gives what DecodeBatch gives, fields absent
// from the input zero (not left over from the old records); a batch without
// room, and an empty input array, are allocated as DecodeBatch does.
func TestDecodeBatchIntoReusesAndClears(t *testing.T) {
	c, ok := For[intoRec]()
	if !ok {
		t.Fatal("no codec for intoRec")
	}
	// The second record has no "n": it must decode as 0.
	data, err := msgpack.Marshal([]map[string]any{{"k": "a", "n": 1}, {"k": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	dirty := []intoRec{{"x", 7}, {"y", 8}, {"z", 9}}
	got, err := c.DecodeBatchInto(dirty[:0], data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || got[1].N != 0 {
		t.Fatalf("into a used batch: %+v, want %+v", got, want)
	}
	if &got[0] != &dirty[0] {
		t.Fatal("a batch with room was not reused")
	}
	small := make([]intoRec, 0, 1)
	if got, _ := c.DecodeBatchInto(small, data); len(got) != 2 || &got[0] == &small[:1][0] {
		t.Fatalf("a batch without room: %+v", got)
	}
	empty, _ := msgpack.Marshal([]intoRec{})
	if got, err := c.DecodeBatchInto(dirty[:0], empty); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty batch: %#v, %v (want an empty, non-nil batch)", got, err)
	}
}
