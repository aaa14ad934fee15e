package recordcodec

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"
)

// TestCompactSize pins the encoding of one keycount-style record: Seq
// 123456 is a uint32 (5 bytes), not an int64 (9), so the record takes 18
// bytes where the library's default encoding takes 22.
func TestCompactSize(t *testing.T) {
	c, _ := For[event]()
	rec := []event{{Key: "k000042", Seq: 123456}}
	got, err := c.AppendBatch(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := raw(0x91, 0x82, 0xa1, "k", 0xa7, "k000042", 0xa1, "i", 0xce, be32(123456))
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendBatch = % x, want % x", got, want)
	}
	if n := len(got) - 1; n != 18 { // less the array header
		t.Fatalf("record of %d bytes, want 18", n)
	}
	if n := len(mp(rec)) - 1; n != 22 {
		t.Fatalf("the library's default encoding takes %d bytes, want 22", n)
	}

	recs := make([]event, 4096)
	for i := range recs {
		recs[i] = event{Key: "k000042", Seq: 123456}
	}
	got, err = c.AppendBatch(nil, recs)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + 18*len(recs); len(got) != want { // array16 header
		t.Fatalf("batch of %d records: %d bytes, want %d", len(recs), len(got), want)
	}
}

// errGeneral stands in for the general integer reader in TestInlineInts.
var errGeneral = errors.New("left to the general reader")

// TestInlineInts checks structCodec.decode's inline integer reading against
// the general reader (decodeInt) for every code byte, every payload length
// up to 9 (random payloads) and every field width, at the end of the data
// and followed by more: whatever the inline path reads, it stores what
// decodeInt stores and ends where readInt ends; it reads every integer form
// followed by at least 8 bytes; and it leaves the rest (nil, other types,
// values cut short, the last bytes of the data) to the general reader.
func TestInlineInts(t *testing.T) {
	type ints struct {
		I8  int8   `msgpack:"v"`
		I16 int16  `msgpack:"w"`
		I32 int32  `msgpack:"x"`
		I64 int64  `msgpack:"y"`
		U8  uint8  `msgpack:"V"`
		U16 uint16 `msgpack:"W"`
		U32 uint32 `msgpack:"X"`
		U64 uint64 `msgpack:"Y"`
		I   int    `msgpack:"z"`
		U   uint   `msgpack:"Z"`
	}
	s, err := compileStruct(reflect.TypeFor[ints]())
	if err != nil {
		t.Fatal(err)
	}
	general := make([]decodeFunc, len(s.fields))
	for i := range s.fields {
		general[i] = s.fields[i].codec.dec
		s.fields[i].codec.dec = func(*decoder, unsafe.Pointer) error { return errGeneral }
	}
	r := rand.New(rand.NewPCG(7, 7)) // deterministic: exhaustive but for the payload bytes
	for c := range 256 {
		for l := range 10 {
			for range 4 {
				payload := make([]byte, 1+l)
				payload[0] = byte(c)
				for i := 1; i < len(payload); i++ {
					payload[i] = byte(r.Uint32())
				}
				ref := decoder{data: payload}
				_, refErr := ref.readInt()
				isInt := byte(c) <= 0x7f || byte(c) >= negFixLow || (byte(c) >= codeUint8 && byte(c) <= codeInt64)
				for i, f := range s.fields {
					for _, more := range []int{0, 8} {
						data := raw(0x81, f.key, payload, bytes.Repeat([]byte{0xc1}, more))
						var got, want ints
						d := decoder{data: data}
						err := s.decode(&d, unsafe.Pointer(&got))
						if errors.Is(err, errGeneral) {
							if isInt && refErr == nil && len(data)-(1+len(f.key)) > 8 {
								t.Fatalf("%s from % x: left to the general reader", f.name, data)
							}
							continue
						}
						if err != nil {
							t.Fatalf("%s from % x: %v", f.name, payload, err)
						}
						wd := decoder{data: data, pos: 1 + len(f.key)}
						if err := general[i](&wd, unsafe.Add(unsafe.Pointer(&want), f.off)); err != nil {
							t.Fatalf("%s from % x: inline read %+v, the general reader failed: %v", f.name, payload, got, err)
						}
						if got != want || d.pos != wd.pos {
							t.Fatalf("%s from % x: inline %+v to %d, general %+v to %d", f.name, payload, got, d.pos, want, wd.pos)
						}
					}
				}
			}
		}
	}
}

// intForms are the msgpack encodings of n in every integer form whose
// payload can carry it (some forms wrap it, as other writers might).
func intForms(n int64) [][]byte {
	var out [][]byte
	if n >= -32 && n <= 127 {
		out = append(out, []byte{byte(n)})
	}
	out = append(out,
		raw(0xcc, byte(n)), raw(0xcd, be16(uint16(n))), raw(0xce, be32(uint32(n))), raw(0xcf, be64(uint64(n))),
		raw(0xd0, byte(n)), raw(0xd1, be16(uint16(n))), raw(0xd2, be32(uint32(n))), raw(0xd3, be64(uint64(n))),
	)
	return out
}

// TestIntFormsIntoEveryKind decodes each integer form of edge values into
// every integer field of allKinds: the fast path must decode it, to what
// the library decodes (wrapping to the field's width); cut short it must
// fail, as the library does.
func TestIntFormsIntoEveryKind(t *testing.T) {
	c, _ := For[allKinds]()
	keys := []string{"int", "i8", "i16", "i32", "i64", "uint", "u8", "u16", "u32", "u64", "NamedI"}
	values := append([]int64{300, -300, 70000, -70000, 1 << 40, -(1 << 40)}, edgeInts...)
	for _, key := range keys {
		// The key first (inline key match for "int") or after another one.
		prefixes := [][]byte{raw(0x81, byte(0xa0|len(key)), key), raw(0x82, 0xa1, "B", 0xc3, byte(0xa0|len(key)), key)}
		for _, v := range values {
			for _, form := range intForms(v) {
				for _, prefix := range prefixes {
					data := raw(0x91, prefix, form)
					out, err := fastPath(c, data)
					if err != nil {
						t.Fatalf("%s from % x: fast path: %v", key, form, err)
					}
					if err := sameAsLibrary(c, data); err != nil {
						t.Fatalf("%s from % x: %v", key, form, err)
					}
					if again, err := c.DecodeBatch(data); err != nil || !bytes.Equal(mp(again), mp(out)) {
						t.Fatalf("%s from % x: DecodeBatch differs from the fast path: %v", key, form, err)
					}
					for cut := len(data) - len(form); cut < len(data); cut++ {
						if out, err := c.DecodeBatch(data[:cut]); err == nil {
							t.Fatalf("%s from % x cut to %d bytes: decoded %+v", key, form, cut, out)
						}
					}
				}
			}
		}
	}
}

// TestIntFormsRoundTrip encodes every edge value in every integer kind and
// checks the form is the smallest one: the payload decoded into a wider
// kind is the value, and no shorter form could carry it.
func TestIntFormsRoundTrip(t *testing.T) {
	c, _ := For[allKinds]()
	for _, n := range edgeInts {
		rec := allKinds{I64: n, U64: uint64(n)}
		got, err := c.AppendBatch(nil, []allKinds{rec})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			key  string
			want uint64
		}{{"i64", uint64(n)}, {"u64", uint64(n)}} {
			at := bytes.Index(got, raw(byte(0xa0|len(f.key)), f.key)) + 1 + len(f.key)
			d := decoder{data: got, pos: at}
			v, err := d.readInt()
			if next := d.pos; err != nil || uint64(v) != f.want {
				t.Fatalf("%s = %d: encoded % x", f.key, n, got[at:next])
			}
			next := d.pos
			if size, min := next-at, smallestForm(f.key == "i64", f.want); size != min {
				t.Fatalf("%s = %d: %d bytes (% x), want %d", f.key, n, size, got[at:next], min)
			}
		}
	}
}

// smallestForm is the size of the smallest msgpack form of v, read as an
// int64 when signed, else as a uint64.
func smallestForm(signed bool, v uint64) int {
	if signed && int64(v) < 0 {
		switch n := int64(v); {
		case n >= -32:
			return 1
		case n >= math.MinInt8:
			return 2
		case n >= math.MinInt16:
			return 3
		case n >= math.MinInt32:
			return 5
		}
		return 9
	}
	switch {
	case v <= math.MaxInt8:
		return 1
	case v <= math.MaxUint8:
		return 2
	case v <= math.MaxUint16:
		return 3
	case v <= math.MaxUint32:
		return 5
	}
	return 9
}

// TestIntFormsOfScalars pins a batch of int8s and of uint64s: each value in
// its smallest form, as the library writes them with compact integers.
func TestIntFormsOfScalars(t *testing.T) {
	i8, _ := For[int8]()
	got, err := i8.AppendBatch(nil, []int8{0, -1, -32, -33, 127, -128})
	if err != nil {
		t.Fatal(err)
	}
	if want := raw(0x96, 0, 0xff, 0xe0, 0xd0, 0xdf, 0x7f, 0xd0, 0x80); !bytes.Equal(got, want) {
		t.Fatalf("int8s: % x, want % x", got, want)
	}
	u64, _ := For[uint64]()
	got, err = u64.AppendBatch(nil, []uint64{5, 200, 1 << 16, 1 << 32, math.MaxUint64})
	if err != nil {
		t.Fatal(err)
	}
	want := raw(0x95, 5, 0xcc, 200, 0xce, be32(1<<16), 0xcf, be64(1<<32), 0xcf, be64(math.MaxUint64))
	if !bytes.Equal(got, want) {
		t.Fatalf("uint64s: % x, want % x", got, want)
	}
	if !bytes.Equal(got, mpc([]uint64{5, 200, 1 << 16, 1 << 32, math.MaxUint64})) {
		t.Fatal("uint64s: differ from the library")
	}
}
