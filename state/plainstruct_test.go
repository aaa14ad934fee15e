package state

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// plainAll has one field of every kind plainStruct decodes, renamed or not.
type plainAll struct {
	B   bool    `msgpack:"b"`
	I   int     `msgpack:"i,omitempty"`
	I8  int8    `msgpack:"i8"`
	I16 int16   `msgpack:"i16"`
	I32 int32   `msgpack:"i32"`
	I64 int64   `msgpack:"i64"`
	U   uint    `msgpack:"u"`
	U8  uint8   `msgpack:"u8"`
	U16 uint16  `msgpack:"u16"`
	U32 uint32  `msgpack:"u32"`
	U64 uint64  `msgpack:"u64"`
	F32 float32 `msgpack:"f32"`
	F64 float64
	S   string        `msgpack:"s"`
	Raw []byte        `msgpack:"raw"`
	D   time.Duration `msgpack:"d"`
}

// The shapes plainStruct must leave to msgpack.
type (
	withUnexported struct {
		A int
		b int
	}
	withEmbedded struct {
		plainAll
		C int
	}
	withPointer struct{ P *int }
	withMap     struct{ M map[string]int }
	withTime    struct{ T time.Time }
	withIntern  struct {
		S string `msgpack:"s,intern"`
	}
	withAlias struct {
		S string `msgpack:"s,alias:t"`
	}
	withSkipped struct {
		S string `msgpack:"-"`
	}
	asArray struct {
		_msgpack struct{} `msgpack:",as_array"`
		A        int
	}
	sameName struct {
		A int `msgpack:"x"`
		B int `msgpack:"x"`
	}
	textField  struct{ L level }
	selfDecode struct{ A int }
)

// level decodes itself from text.
type level int

func (l *level) UnmarshalText(b []byte) error { *l = level(len(b)); return nil }

func (s *selfDecode) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeInt()
	s.A = n + 1
	return err
}

func TestPlainStructEligibility(t *testing.T) {
	type plainEmpty struct{}
	if plainStructFor[plainAll]() == nil {
		t.Error("plainAll not decoded as a plain struct")
	}
	if plainStructFor[plainEmpty]() == nil {
		t.Error("empty struct not decoded as a plain struct")
	}
	for name, got := range map[string]*plainStruct{
		"unexported field": plainStructFor[withUnexported](),
		"embedded struct":  plainStructFor[withEmbedded](),
		"pointer field":    plainStructFor[withPointer](),
		"map field":        plainStructFor[withMap](),
		"time field":       plainStructFor[withTime](),
		"intern option":    plainStructFor[withIntern](),
		"alias option":     plainStructFor[withAlias](),
		"skipped field":    plainStructFor[withSkipped](),
		"as_array":         plainStructFor[asArray](),
		"duplicate names":  plainStructFor[sameName](),
		"text unmarshaler": plainStructFor[textField](),
		"custom decoder":   plainStructFor[selfDecode](),
		"not a struct":     plainStructFor[int](),
	} {
		if got != nil {
			t.Errorf("%s: decoded as a plain struct", name)
		}
	}
}

// encodings of v: the table's own encoder, msgpack's defaults, and a
// hand-written map with fields shuffled, an unknown one and a nil.
func encodings(t *testing.T, rng *rand.Rand, v plainAll) [][]byte {
	t.Helper()
	var eb encBuf
	if err := eb.reset().Encode(&v); err != nil {
		t.Fatal(err)
	}
	own := eb.bytes()
	plain, err := msgpack.Marshal(&v)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]any{
		"b": v.B, "i": v.I, "i8": v.I8, "i16": v.I16, "i32": v.I32, "i64": v.I64,
		"u": v.U, "u8": v.U8, "u16": v.U16, "u32": v.U32, "u64": v.U64,
		"f32": v.F32, "F64": v.F64, "s": v.S, "raw": v.Raw, "d": v.D,
		"unknown": []any{1, "x", map[string]int{"y": 2}},
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		if rng.IntN(4) > 0 {
			names = append(names, n)
		}
	}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	enc := eb.reset()
	enc.UseCompactInts(rng.IntN(2) == 0)
	enc.EncodeMapLen(len(names) + 1)
	for _, n := range names {
		enc.EncodeString(n)
		enc.Encode(fields[n])
	}
	enc.EncodeString("s")
	enc.EncodeNil()
	enc.UseCompactInts(true)
	return [][]byte{own, plain, eb.bytes()}
}

func randomPlainAll(rng *rand.Rand) plainAll {
	v := plainAll{
		B: rng.IntN(2) == 0, I: int(rng.Int64()), I8: int8(rng.Int()), I16: int16(rng.Int()),
		I32: int32(rng.Int()), I64: rng.Int64() - rng.Int64(), U: uint(rng.Uint64()), U8: uint8(rng.Uint32()),
		U16: uint16(rng.Uint32()), U32: rng.Uint32(), U64: rng.Uint64(), F32: rng.Float32(),
		F64: rng.NormFloat64(), S: strings.Repeat("s", rng.IntN(300)), D: time.Duration(rng.Int64()),
	}
	switch rng.IntN(3) {
	case 0:
		v.Raw = nil
	case 1:
		v.Raw = []byte{}
	default:
		v.Raw = make([]byte, rng.IntN(70000))
		for i := range v.Raw {
			v.Raw[i] = byte(rng.Uint32())
		}
	}
	return v
}

// TestPlainStructAgreesWithMsgpack: on random values in several encodings,
// and on those encodings damaged (a byte changed, cut short), a ValueTable's
// decoder gives what msgpack.Unmarshal gives, value and error alike.
func TestPlainStructAgreesWithMsgpack(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dec, plain := decoderIntoFor[plainAll](), plainStructFor[plainAll]()
	for range 300 {
		for _, data := range encodings(t, rng, randomPlainAll(rng)) {
			var direct, want plainAll
			if err := msgpack.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if err := plain.decode(newDecoderOf(data, copyInput), unsafe.Pointer(&direct)); err != nil || !reflect.DeepEqual(direct, want) {
				t.Fatalf("seed %d: input %x: plain decoder gave %+v, %v; msgpack %+v", seed, data, direct, err, want)
			}
			cases := [][]byte{data, data[:rng.IntN(len(data))]}
			bad := append([]byte(nil), data...)
			bad[rng.IntN(len(bad))] = byte(rng.Uint32())
			cases = append(cases, bad)
			for _, in := range cases {
				var want, got plainAll
				wantErr := msgpack.Unmarshal(in, &want)
				d := newDecoderOf(in, copyInput)
				gotErr := dec(d, &got)
				if (gotErr == nil) != (wantErr == nil) {
					t.Fatalf("seed %d: input %x: error %v, msgpack's %v", seed, in, gotErr, wantErr)
				}
				if wantErr == nil && !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d: input %x: decoded %+v, msgpack %+v", seed, in, got, want)
				}
			}
		}
	}
}

// FuzzPlainStruct: on any input, a ValueTable's decoder of plainAll agrees
// with msgpack.Unmarshal.
func FuzzPlainStruct(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 4 {
		v := randomPlainAll(rng)
		v.Raw = v.Raw[:min(len(v.Raw), 8)]
		data, err := msgpack.Marshal(&v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	dec := decoderIntoFor[plainAll]()
	f.Fuzz(func(t *testing.T, in []byte) {
		var want, got plainAll
		wantErr := msgpack.Unmarshal(in, &want)
		gotErr := dec(newDecoderOf(in, copyInput), &got)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("error %v, msgpack's %v", gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %+v, msgpack %+v", got, want)
		}
	})
}
