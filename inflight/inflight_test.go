package inflight

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
)

// intCodec encodes batches of ints for the tests.
type intCodec = plan.MsgpackCodec[int]

// ints makes a batch of ints.
func ints(v ...int) plan.Records[int] { return plan.Records[int](v) }

func TestRoundTripKeepsOrder(t *testing.T) {
	in := []Batch{{Seq: 1, Records: ints(1, 2, 3)}, {Seq: 2, Records: ints(4)}, {Seq: 5, Records: ints(5, 6)}}
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
	data, _, err := Encode(intCodec{}, []Batch{{Seq: 1, Records: ints(1)}, {Seq: 2, Records: ints(2)}})
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
	data, _, _ := Encode(intCodec{}, []Batch{{Seq: 1, Records: ints(1, 2)}})
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
