package inflight

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// intCodec encodes batches of ints for the tests.
type intCodec struct{}

func (intCodec) EncodeBatch(recs []any) ([]byte, error) {
	v := make([]int, len(recs))
	for i, r := range recs {
		n, ok := r.(int)
		if !ok {
			return nil, fmt.Errorf("record %d is %T", i, r)
		}
		v[i] = n
	}
	return msgpack.Marshal(v)
}

func (intCodec) DecodeBatch(data []byte) ([]any, error) {
	var v []int
	if err := msgpack.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out, nil
}

func TestRoundTripKeepsOrder(t *testing.T) {
	in := []Batch{{Seq: 1, Records: []any{1, 2, 3}}, {Seq: 2, Records: []any{4}}, {Seq: 5, Records: []any{5, 6}}}
	data, n, err := Encode(intCodec{}, in)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("%d records, want 6", n)
	}
	out, err := Decode(intCodec{}, data)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("decoded %v, want %v", out, in)
	}
}

func TestCorruptChannelStateIsReported(t *testing.T) {
	data, _, err := Encode(intCodec{}, []Batch{{Seq: 1, Records: []any{1}}, {Seq: 2, Records: []any{2}}})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"empty":        nil,
		"version":      append([]byte{9}, data[1:]...),
		"truncated":    data[:len(data)-2],
		"garbage":      {formatVersion, 0xc1, 0xc1},
		"out of order": mustEncodeWire(t, []wireBatch{{Seq: 2}, {Seq: 1}}),
		"bad record":   mustEncodeWire(t, []wireBatch{{Seq: 1, Data: []byte{0xc1}}}),
	}
	for name, b := range bad {
		if _, err := Decode(intCodec{}, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func mustEncodeWire(t *testing.T, w []wireBatch) []byte {
	t.Helper()
	b, err := msgpack.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{formatVersion}, b...)
}

func FuzzDecode(f *testing.F) {
	data, _, _ := Encode(intCodec{}, []Batch{{Seq: 1, Records: []any{1, 2}}})
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := Decode(intCodec{}, b)
		if err == nil {
			if _, _, err := Encode(intCodec{}, out); err != nil {
				t.Fatalf("decoded state does not encode again: %v", err)
			}
		}
	})
}
