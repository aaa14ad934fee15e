package recordcodec

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// raw concatenates bytes, byte slices and strings (as their bytes) into
// hand-made msgpack.
func raw(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case byte:
			b = append(b, p)
		case int:
			b = append(b, byte(p))
		case []byte:
			b = append(b, p...)
		case string:
			b = append(b, p...)
		default:
			panic(p)
		}
	}
	return b
}

// be16, be32 and be64 are big-endian numbers for raw.
func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// mp is what the library writes for v with default options: integers of
// the sized kinds in their own width, as old checkpoints hold them.
func mp(v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// mpc is what the library writes for v with compact integers, as
// AppendBatch does.
func mpc(v any) []byte {
	b, err := marshalCompact(v)
	if err != nil {
		panic(err)
	}
	return b
}

// outcome is how DecodeBatch must treat a rawCase.
type outcome int

const (
	decoded      outcome = iota // on the fast path, successfully
	failsFast                   // on the fast path, with an error (truncated, malformed)
	viaLibrary                  // left to the library, which decodes it
	libraryFails                // left to the library, which fails
)

// rawCase is hand-made input that must decode as the library decodes it.
type rawCase struct {
	name string
	data []byte
	want outcome
}

// checkRaw runs cases against c and the library, and checks which path each
// took: the library, behind the fast path, would hide the fast path's
// mistakes.
func checkRaw[T any](t *testing.T, c *Codec[T], cases []rawCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := c.DecodeBatch(tc.data)
		wantErr := tc.want == failsFast || tc.want == libraryFails
		if (err != nil) != wantErr {
			t.Errorf("%s: DecodeBatch(% x) = %+v, %v; want error %t", tc.name, tc.data, got, err, wantErr)
			continue
		}
		if err := sameAsLibrary(c, tc.data); err != nil {
			t.Errorf("%s: DecodeBatch(% x): %v", tc.name, tc.data, err)
		}
		_, err = fastPath(c, tc.data)
		if slow, wantSlow := err == errSlow, tc.want == viaLibrary || tc.want == libraryFails; slow != wantSlow {
			t.Errorf("%s: left to the library: %t, want %t (fast path: %v)", tc.name, slow, wantSlow, err)
		}
	}
}

// fastPath is DecodeBatch without the fallback to the library: errSlow
// says it would have been used.
func fastPath[T any](c *Codec[T], data []byte) ([]T, error) {
	if c.bytesBatch {
		return c.decodeBytesBatch(data)
	}
	return c.decodeArray(nil, data, nil)
}

// TestEventVariants decodes hand-made variants of event batches: what
// other writers, or the library with other options, may send.
func TestEventVariants(t *testing.T) {
	c, _ := For[event]()
	k, i := raw(0xa1, "k"), raw(0xa1, "i")
	checkRaw(t, c, []rawCase{
		{"as marshalled", raw(0x91, 0x82, k, 0xa1, "x", i, 0xd3, be64(7)), decoded},
		{"keys reversed", raw(0x91, 0x82, i, 0xd3, be64(7), k, 0xa1, "x"), decoded},
		{"key repeated, last wins", raw(0x91, 0x83, k, 0xa1, "a", i, 1, k, 0xa1, "b"), decoded},
		{"key as bin", raw(0x91, 0x82, 0xc4, 1, "k", 0xa1, "x", i, 5), decoded},
		{"key as str8", raw(0x91, 0x82, 0xd9, 1, "k", 0xa1, "x", 0xda, be16(1), "i", 5), decoded},
		{"key nil is unknown", raw(0x91, 0x82, 0xc0, 5, k, 0xa1, "x"), decoded},
		{"key an int", raw(0x91, 0x81, 1, 2), libraryFails},
		{"unknown keys", raw(0x91, 0x84, 0xa1, "z", 0x92, 1, 0x81, 0xa1, "q", 0xc0, k, 0xa1, "x", 0xa2, "zz", 0xd6, 0xff, be32(1), i, 3), decoded},
		{"unknown key with ext8 and bin32", raw(0x91, 0x83, 0xa1, "z", 0xc7, 2, 5, 1, 2, 0xa1, "y", 0xc6, be32(3), "abc", i, 3), decoded},
		{"fewer keys", raw(0x91, 0x81, i, 0xcc, 200), decoded},
		{"no keys", raw(0x92, 0x80, 0x80), decoded},
		{"map16 and map32", raw(0x92, 0xde, be16(1), i, 1, 0xdf, be32(1), k, 0xa0), decoded},
		{"array16 and array32 batches", raw(0xdc, be16(1), 0x81, i, 1), decoded},
		{"array32 batch", raw(0xdd, be32(2), 0x81, i, 1, 0xc0), decoded},
		{"nil record", raw(0x92, 0xc0, 0x82, k, 0xa1, "x", i, 1), decoded},
		{"ints of every width", raw(0x98,
			0x81, i, 0xcc, 0xff, 0x81, i, 0xcd, be16(0xffff), 0x81, i, 0xce, be32(0xffffffff), 0x81, i, 0xcf, be64(math.MaxUint64),
			0x81, i, 0xd0, 0x80, 0x81, i, 0xd1, be16(0x8000), 0x81, i, 0xd2, be32(0x80000000), 0x81, i, 0xe0), decoded},
		{"nil values", raw(0x91, 0x82, k, 0xc0, i, 0xc0), decoded},
		{"string as bin", raw(0x91, 0x81, k, 0xc4, 2, "hi"), decoded},
		{"string as str16", raw(0x91, 0x81, k, 0xda, be16(2), "hi"), decoded},
		{"int as float", raw(0x91, 0x81, i, 0xca, be32(math.Float32bits(1))), libraryFails},
		{"int as string", raw(0x91, 0x81, i, 0xa1, "1"), libraryFails},
		{"string as int", raw(0x91, 0x81, k, 1), libraryFails},
		{"string as map", raw(0x91, 0x81, k, 0x80), libraryFails},
		{"as array", raw(0x91, 0x92, 0xa1, "x", 5), viaLibrary},
		{"as array of the wrong length", raw(0x91, 0x93, 0xa1, "x", 5, 6), libraryFails},
		{"as empty array", raw(0x91, 0x90), viaLibrary},
		{"as array, then a map", raw(0x92, 0x92, 0xa1, "x", 5, 0x81, i, 6), viaLibrary},
		{"record an int", raw(0x91, 5), libraryFails},
		{"record a string", raw(0x91, 0xa1, "x"), libraryFails},
		{"batch nil", raw(0xc0), decoded},
		{"batch empty", raw(0x90), decoded},
		{"batch a map", raw(0x81, k, 0xa1, "x"), libraryFails},
		{"batch a string", raw(0xa1, "x"), libraryFails},
		{"batch an int", raw(1), libraryFails},
		{"trailing bytes ignored", raw(0x91, 0x81, i, 1, 0xc1, 0xff), decoded},
		{"empty input", raw(), failsFast},
		{"unused code 0xc1 in an unknown key", raw(0x91, 0x81, 0xa1, "z", 0xc1), failsFast},
		{"ext as record", raw(0x91, 0xd4, 1, 1), libraryFails},
	})
}

// TestAllKindsVariants decodes values of other types and widths into every
// kind, as the library converts them.
func TestAllKindsVariants(t *testing.T) {
	c, _ := For[allKinds]()
	one := func(key string, val ...any) []byte {
		return raw(0x91, 0x81, byte(0xa0|len(key)), key, raw(val...))
	}
	checkRaw(t, c, []rawCase{
		{"int8 from 300 wraps", one("i8", 0xcd, be16(300)), decoded},
		{"int8 from uint64 max", one("i8", 0xcf, be64(math.MaxUint64)), decoded},
		{"int16 from int32", one("i16", 0xd2, be32(0x12345678)), decoded},
		{"int32 from negative fixint", one("i32", 0xff), decoded},
		{"int from int64 min", one("int", 0xd3, be64(1<<63)), decoded},
		{"uint8 from -1", one("u8", 0xff), decoded},
		{"uint16 from int16 -2", one("u16", 0xd1, be16(0xfffe)), decoded},
		{"uint32 from int8 -128", one("u32", 0xd0, 0x80), decoded},
		{"uint64 from int64 min", one("u64", 0xd3, be64(1<<63)), decoded},
		{"uint from nil", one("uint", 0xc0), decoded},
		{"float32 from float32", one("f32", 0xca, be32(math.Float32bits(-2.5))), decoded},
		{"float32 from float64", one("f32", 0xcb, be64(math.Float64bits(2.5))), libraryFails},
		{"float32 from int", one("f32", 0xd2, be32(0xffffffff)), decoded},
		{"float32 from uint64", one("f32", 0xcf, be64(math.MaxUint64)), decoded},
		{"float32 from nil", one("f32", 0xc0), decoded},
		{"float32 from string", one("f32", 0xa1, "x"), libraryFails},
		{"float64 from float32", one("f64", 0xca, be32(math.Float32bits(0.1))), decoded},
		{"float64 from float32 NaN", one("f64", 0xca, be32(0x7fc00001)), decoded},
		{"float64 from int", one("f64", 0x7f), decoded},
		{"float64 from bool", one("f64", 0xc3), libraryFails},
		{"bool from nil", one("B", 0xc0), decoded},
		{"bool from int", one("B", 1), libraryFails},
		{"bytes from str", one("bytes", 0xa2, "hi"), decoded},
		{"bytes empty", one("bytes", 0xc4, 0), decoded},
		{"bytes empty str", one("bytes", 0xa0), decoded},
		{"bytes nil", one("bytes", 0xc0), decoded},
		{"bytes from array", one("bytes", 0x91, 1), libraryFails},
		{"bytes repeated", raw(0x91, 0x82, 0xa5, "bytes", 0xa3, "abc", 0xa5, "bytes", 0xa1, "d"), decoded},
		{"named byte slice from bin", one("NamedB", 0xc4, 2, 1, 2), decoded},
		{"named string from bin", one("Named", 0xc4, 2, "hi"), decoded},
		{"skipped field is unknown", one("Skip", 0xa1, "x"), decoded},
		{"unexported field is unknown", one("hidden", 5), decoded},
		{"string from str32", one("s", 0xdb, be32(3), "abc"), decoded},
		{"all fields in reverse", reversedAllKinds(), decoded},
	})
}

// reversedAllKinds is a sample allKinds record with its keys in reverse.
func reversedAllKinds() []byte {
	var v allKinds
	fillSample(reflectValue(&v))
	infos, _ := structFields(reflectValue(&v).Type())
	b := raw(0x91, 0xde, be16(uint16(len(infos))))
	full := mp(v)
	// Re-encode each field value on its own and write them in reverse.
	var m map[string]msgpack.RawMessage
	if err := msgpack.Unmarshal(full, &m); err != nil {
		panic(err)
	}
	for i := len(infos) - 1; i >= 0; i-- {
		b = append(b, mp(infos[i].name)...)
		b = append(b, m[infos[i].name]...)
	}
	return b
}

// TestNestedVariants decodes nested structs given as nil, repeated, merged
// and in other orders.
func TestNestedVariants(t *testing.T) {
	c, _ := For[nested]()
	in := raw(0xa2, "in")
	mid := raw(0xa3, "mid")
	checkRaw(t, c, []rawCase{
		{"nested nil", raw(0x91, 0x81, mid, 0xc0), decoded},
		{"nested set then nil", raw(0x91, 0x82, mid, 0x81, in, 0x81, 0xa1, "a", 5, mid, 0xc0), decoded},
		{"nested repeated merges", raw(0x91, 0x82, in, 0x81, 0xa1, "a", 5, in, 0x81, 0xa1, "s", 0xa1, "x"), decoded},
		{"nested as array", raw(0x91, 0x81, in, 0x92, 7, 0xa1, "x"), viaLibrary},
		{"nested as empty array", raw(0x91, 0x82, in, 0x81, 0xa1, "a", 5, in, 0x90), viaLibrary},
		{"nested an int", raw(0x91, 0x81, in, 1), libraryFails},
		{"deep field truncated", raw(0x91, 0x81, mid, 0x81, in, 0x81, 0xa1, "s", 0xa5, "ab"), failsFast},
	})
}

// TestManyVariants decodes a struct whose keys are looked up by map, in
// shuffled order.
func TestManyVariants(t *testing.T) {
	c, _ := For[many]()
	checkRaw(t, c, []rawCase{
		{"shuffled", raw(0x91, 0x84, 0xa2, "G7", 0xa1, "x", 0xa2, "F3", 5, 0xa2, "F0", 6, 0xa2, "H0", 1), decoded},
	})
}

// TestScalarVariants decodes batches of scalar kinds from other forms.
func TestScalarVariants(t *testing.T) {
	ints, _ := For[int64]()
	checkRaw(t, ints, []rawCase{
		{"compact ints and nil", raw(0x94, 1, 0xff, 0xc0, 0xcd, be16(300)), decoded},
		{"float", raw(0x91, 0xcb, be64(0)), libraryFails},
	})
	strs, _ := For[string]()
	checkRaw(t, strs, []rawCase{
		{"bin, nil, str8", raw(0x93, 0xc4, 1, "a", 0xc0, 0xd9, 2, "bc"), decoded},
		{"int", raw(0x91, 1), libraryFails},
	})
	u8, _ := For[uint8]()
	checkRaw(t, u8, []rawCase{
		{"bin", raw(0xc4, 3, 1, 2, 3), decoded},
		{"str", raw(0xa2, 1, 2), decoded},
		{"empty", raw(0xc4, 0), decoded},
		{"nil", raw(0xc0), decoded},
		{"array of ints", raw(0x92, 1, 2), libraryFails},
		{"truncated", raw(0xc5, be16(3), 1), failsFast},
	})
	bs, _ := For[[]byte]()
	checkRaw(t, bs, []rawCase{
		{"nil, empty, str", raw(0x93, 0xc0, 0xc4, 0, 0xa1, "x"), decoded},
	})
	bools, _ := For[bool]()
	checkRaw(t, bools, []rawCase{
		{"nil", raw(0x92, 0xc0, 0xc3), decoded},
		{"int", raw(0x91, 0), libraryFails},
	})
}

// TestEncodeEdges pins AppendBatch's bytes for values at the edges of the
// msgpack forms against the library with compact integers, and decodes
// them and the library's default encoding.
func TestEncodeEdges(t *testing.T) {
	c, _ := For[allKinds]()
	var recs []allKinds
	for _, n := range edgeInts {
		recs = append(recs, allKinds{
			I: int(n), I8: int8(n), I16: int16(n), I32: int32(n), I64: n,
			U: uint(n), U8: uint8(n), U16: uint16(n), U32: uint32(n), U64: uint64(n),
			F32: float32(n), F64: float64(n), NamedI: myInt(n),
		})
	}
	for _, l := range stringLens {
		s := string(bytes.Repeat([]byte("x"), l))
		recs = append(recs, allKinds{S: s, Named: myString(s), Bytes: []byte(s), NamedB: []myByte(s)})
	}
	recs = append(recs,
		allKinds{F32: float32(math.NaN()), F64: math.NaN()},
		allKinds{F32: float32(math.Inf(-1)), F64: math.Copysign(0, -1)},
		allKinds{Bytes: []byte{}, NamedB: []myByte{}},
	)
	got, err := c.AppendBatch(nil, recs)
	if err != nil {
		t.Fatal(err)
	}
	if want := mpc(recs); !bytes.Equal(got, want) {
		t.Fatalf("AppendBatch and the library (compact ints) differ from byte %d", firstDiff(got, want))
	}
	if err := sameAsLibrary(c, got); err != nil {
		t.Fatal(err)
	}
	if err := sameAsLibrary(c, mp(recs)); err != nil {
		t.Fatalf("default encoding: %v", err)
	}
}
