package state

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// plainOmit has every kind omitempty, so that each field is left out when
// it is zero or empty.
type plainOmit struct {
	B   bool    `msgpack:"b,omitempty"`
	I8  int8    `msgpack:",omitempty"`
	U16 uint16  `msgpack:"u16,omitempty"`
	I64 int64   `msgpack:"i64,omitempty"`
	U64 uint64  `msgpack:"u64,omitempty"`
	F32 float32 `msgpack:"f32,omitempty"`
	F64 float64 `msgpack:"f64,omitempty"`
	S   string  `msgpack:"s,omitempty"`
	Raw []byte  `msgpack:"raw,omitempty"`
}

// Shapes that encode differently from their kinds, for plainEncoderFor to
// refuse.
type (
	selfEncode struct{ A int }
	textLevel  int
	textEncode struct{ L textLevel }
	zeroLevel  int
	zeroField  struct {
		Z zeroLevel `msgpack:"z,omitempty"`
	}
	registered struct{ A int }
)

func (s selfEncode) EncodeMsgpack(e *msgpack.Encoder) error { return e.EncodeInt(int64(s.A) + 1) }
func (l textLevel) MarshalText() ([]byte, error)            { return []byte("level"), nil }
func (z zeroLevel) IsZero() bool                            { return z == 7 }

// encodeBoth encodes v with enc and with msgpack's reflection encoder,
// both with the state's encoder options.
func encodeBoth[T any](t *testing.T, enc encodeFunc[T], v T) (ours, theirs []byte) {
	t.Helper()
	var a, b encBuf
	if err := enc(a.reset(), v); err != nil {
		t.Fatal(err)
	}
	if err := b.reset().Encode(&v); err != nil {
		t.Fatal(err)
	}
	return a.bytes(), b.bytes()
}

// TestPlainEncoderWritesMsgpacksBytes: on random values of every field
// kind, with extreme integers, NaN and signed zeros, nil and empty byte
// slices, and with omitempty fields zero or not, the plain encoder writes
// exactly the bytes msgpack's reflection encoder writes, and encoderFor
// uses it for plain structs.
func TestPlainEncoderWritesMsgpacksBytes(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	all, omit := plainEncoderFor[plainAll](), plainEncoderFor[plainOmit]()
	if all == nil || omit == nil {
		t.Fatalf("plain encoder for plainAll %v, plainOmit %v: want both", all != nil, omit != nil)
	}
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	ints := []int64{0, 1, -1, 127, 128, -32, -33, math.MaxInt8, math.MinInt8, math.MaxInt16, math.MinInt16, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	pick := func() int64 {
		if rng.IntN(2) == 0 {
			return ints[rng.IntN(len(ints))]
		}
		return rng.Int64() >> rng.IntN(64)
	}
	for i := range 2000 {
		v := randomPlainAll(rng)
		v.I, v.I8, v.I16, v.I32, v.I64 = int(pick()), int8(pick()), int16(pick()), int32(pick()), pick()
		v.U, v.U8, v.U16, v.U32, v.U64 = uint(pick()), uint8(pick()), uint16(pick()), uint32(pick()), uint64(pick())
		v.F64, v.F32 = floats[rng.IntN(len(floats))], float32(floats[rng.IntN(len(floats))])
		if ours, theirs := encodeBoth(t, all, v); !bytes.Equal(ours, theirs) {
			t.Fatalf("seed %d, value %d: %+v\nplain   %x\nmsgpack %x", seed, i, v, ours, theirs)
		}
		var o plainOmit
		if rng.IntN(2) == 0 {
			o.B = true
		}
		if rng.IntN(2) == 0 {
			o.I8, o.U16, o.I64, o.U64 = int8(pick()), uint16(pick()), pick(), uint64(pick())
		}
		if rng.IntN(2) == 0 {
			o.F32, o.F64 = float32(floats[rng.IntN(len(floats))]), floats[rng.IntN(len(floats))]
		}
		switch rng.IntN(3) {
		case 0:
			o.Raw = []byte{}
		case 1:
			o.Raw, o.S = []byte("raw"), "s"
		}
		if ours, theirs := encodeBoth(t, omit, o); !bytes.Equal(ours, theirs) {
			t.Fatalf("seed %d, value %d: %+v\nplain   %x\nmsgpack %x", seed, i, o, ours, theirs)
		}
	}
	type entry struct {
		Count int64  `msgpack:"c"`
		Value []byte `msgpack:"v"`
	}
	e := entry{Count: 300, Value: []byte("value")}
	if ours, theirs := encodeBoth(t, encoderFor[entry](), e); !bytes.Equal(ours, theirs) || plainEncoderFor[entry]() == nil {
		t.Fatalf("encoderFor of a plain struct: %x, msgpack %x (plain encoder %v)", ours, theirs, plainEncoderFor[entry]() != nil)
	}
}

// TestPlainEncoderRefusesTypesThatEncodeThemselves: a struct with an
// encoding method, a field that marshals itself to text, an omitempty field
// whose IsZero decides, a type given a codec with msgpack.Register and
// every shape plainStruct refuses get msgpack's own encoder.
func TestPlainEncoderRefusesTypesThatEncodeThemselves(t *testing.T) {
	msgpack.Register(registered{},
		func(e *msgpack.Encoder, v reflect.Value) error { return e.EncodeString("registered") },
		func(d *msgpack.Decoder, v reflect.Value) error { _, err := d.DecodeString(); return err })
	for name, plain := range map[string]bool{
		"EncodeMsgpack":    plainEncoderFor[selfEncode]() != nil,
		"text marshaler":   plainEncoderFor[textEncode]() != nil,
		"IsZero field":     plainEncoderFor[zeroField]() != nil,
		"registered codec": plainEncoderFor[registered]() != nil,
		"pointer field":    plainEncoderFor[withPointer]() != nil,
		"as_array":         plainEncoderFor[asArray]() != nil,
		"not a struct":     plainEncoderFor[int]() != nil,
	} {
		if plain {
			t.Errorf("%s: encoded as a plain struct", name)
		}
	}
	// And the values still encode as msgpack encodes them.
	for _, v := range []zeroField{{Z: 0}, {Z: 7}} {
		if ours, theirs := encodeBoth(t, encoderFor[zeroField](), v); !bytes.Equal(ours, theirs) {
			t.Fatalf("%+v: %x, msgpack %x", v, ours, theirs)
		}
	}
}
