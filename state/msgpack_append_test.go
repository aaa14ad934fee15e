package state

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// appendCase is one value written both ways: by an appender and by the
// msgpack Encoder call it stands for.
type appendCase struct {
	name string
	app  func([]byte) []byte
	enc  func(*msgpack.Encoder) error
}

// sizeBoundaries are the integers on both sides of every change of
// msgpack's integer encodings, and the extremes.
func sizeBoundaries() []int64 {
	var out []int64
	for _, b := range []int64{0, 32, 127, 128, 255, 256, math.MaxUint16, math.MaxUint16 + 1, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64} {
		for _, d := range []int64{-1, 0, 1} {
			if v := b + d; v >= 0 && (b != math.MaxInt64 || d <= 0) {
				out = append(out, v, -v)
			}
		}
	}
	return append(out, -33, -129, math.MinInt8, math.MinInt16, math.MinInt16-1, math.MinInt32, math.MinInt32-1, math.MinInt64)
}

// appendCases returns the cases of every appender at the boundaries of its
// encodings' sizes, and n random ones from rng.
func appendCases(rng *rand.Rand, n int) []appendCase {
	var cs []appendCase
	ints := sizeBoundaries()
	for range n {
		ints = append(ints, int64(rng.Uint64()), rng.Int64N(1<<20)-1<<19)
	}
	for _, v := range ints {
		cs = append(cs,
			appendCase{"int", func(b []byte) []byte { return appendInt(b, v) }, func(e *msgpack.Encoder) error { return e.EncodeInt(v) }},
			appendCase{"uint", func(b []byte) []byte { return appendUint(b, uint64(v)) }, func(e *msgpack.Encoder) error { return e.EncodeUint(uint64(v)) }},
			appendCase{"float64", func(b []byte) []byte { return appendFloat64(b, float64(v)/3) }, func(e *msgpack.Encoder) error { return e.EncodeFloat64(float64(v) / 3) }},
			appendCase{"float32", func(b []byte) []byte { return appendFloat32(b, float32(v)/3) }, func(e *msgpack.Encoder) error { return e.EncodeFloat32(float32(v) / 3) }},
		)
		if v >= 0 && v <= math.MaxUint16+1 {
			cs = append(cs, appendCase{"map len", func(b []byte) []byte { return appendMapLen(b, int(v)) }, func(e *msgpack.Encoder) error { return e.EncodeMapLen(int(v)) }})
		}
	}
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0, -0.5, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		cs = append(cs, appendCase{"float64", func(b []byte) []byte { return appendFloat64(b, f) }, func(e *msgpack.Encoder) error { return e.EncodeFloat64(f) }})
	}
	lens := []int{0, 1, 15, 16, 31, 32, 33, 255, 256, 257, math.MaxUint16, math.MaxUint16 + 1}
	for range n {
		lens = append(lens, rng.IntN(1<<17))
	}
	for _, l := range lens {
		s := strings.Repeat("k", l)
		cs = append(cs,
			appendCase{"string", func(b []byte) []byte { return appendString(b, s) }, func(e *msgpack.Encoder) error { return e.EncodeString(s) }},
			appendCase{"bytes", func(b []byte) []byte { return appendBytes(b, []byte(s)) }, func(e *msgpack.Encoder) error { return e.EncodeBytes([]byte(s)) }},
		)
	}
	return append(cs,
		appendCase{"nil bytes", func(b []byte) []byte { return appendBytes(b, nil) }, func(e *msgpack.Encoder) error { return e.EncodeBytes(nil) }},
		appendCase{"true", func(b []byte) []byte { return appendBool(b, true) }, func(e *msgpack.Encoder) error { return e.EncodeBool(true) }},
		appendCase{"false", func(b []byte) []byte { return appendBool(b, false) }, func(e *msgpack.Encoder) error { return e.EncodeBool(false) }},
	)
}

// TestAppendersWriteWhatMsgpackWrites compares every appender with the
// msgpack Encoder call it replaces, with the state's encoder options, at
// the boundaries of each encoding's size and on random values, appended
// after bytes already in the slice.
func TestAppendersWriteWhatMsgpackWrites(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var eb encBuf
	for _, c := range appendCases(rand.New(rand.NewPCG(seed, seed)), 200) {
		if err := c.enc(eb.reset()); err != nil {
			t.Fatalf("%s: msgpack: %v", c.name, err)
		}
		prefix := []byte{0xAB, 0xCD}
		got := c.app(prefix)
		if !bytes.Equal(got[:2], []byte{0xAB, 0xCD}) || !bytes.Equal(got[2:], eb.buf.Bytes()) {
			t.Fatalf("%s: appended %x, msgpack wrote %x (seed %d)", c.name, trim(got[2:]), trim(eb.buf.Bytes()), seed)
		}
	}
}

// trim shortens long encodings for a failure message.
func trim(b []byte) []byte {
	if len(b) > 24 {
		return b[:24]
	}
	return b
}

// TestScalarAppendersMatchTheirEncoders checks that each scalar type's
// appender writes what encoderFor's encoder does, and that a type with
// neither a scalar nor a plain encoding has no appender.
func TestScalarAppendersMatchTheirEncoders(t *testing.T) {
	check := func(name string, ours, theirs []byte) {
		t.Helper()
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s: appender %x, encoder %x", name, ours, theirs)
		}
	}
	check("int", appenderFor[int]()(nil, -1000), encodeOne(t, encoderFor[int](), -1000))
	check("int64", appenderFor[int64]()(nil, math.MinInt64), encodeOne(t, encoderFor[int64](), math.MinInt64))
	check("int32", appenderFor[int32]()(nil, 70000), encodeOne(t, encoderFor[int32](), 70000))
	check("uint64", appenderFor[uint64]()(nil, math.MaxUint64), encodeOne(t, encoderFor[uint64](), math.MaxUint64))
	check("float64", appenderFor[float64]()(nil, 2.5), encodeOne(t, encoderFor[float64](), 2.5))
	check("string", appenderFor[string]()(nil, "weir"), encodeOne(t, encoderFor[string](), "weir"))
	check("bool", appenderFor[bool]()(nil, true), encodeOne(t, encoderFor[bool](), true))
	check("bytes", appenderFor[[]byte]()(nil, []byte{1, 2}), encodeOne(t, encoderFor[[]byte](), []byte{1, 2}))
	check("nil bytes", appenderFor[[]byte]()(nil, nil), encodeOne(t, encoderFor[[]byte](), nil))
	if appenderFor[map[string]int]() != nil || appenderFor[[]int]() != nil || appenderFor[*int]() != nil {
		t.Error("a map, a slice of ints or a pointer got an appender; they have none")
	}
}

// encodeOne returns enc's encoding of v.
func encodeOne[T any](t *testing.T, enc encodeFunc[T], v T) []byte {
	t.Helper()
	var eb encBuf
	if err := enc(eb.reset(), v); err != nil {
		t.Fatal(err)
	}
	return eb.buf.Bytes()
}

// BenchmarkEncodeOneValue is the cost of encoding one value of a plain
// struct as a copy on write saves it: by msgpack's reflection, by the
// table's encoder (encoderFor) and by its appender (appenderFor).
func BenchmarkEncodeOneValue(b *testing.B) {
	v := snapEntry{Count: 123456, Value: make([]byte, 256)}
	b.Run("msgpack", func(b *testing.B) {
		var eb encBuf
		for b.Loop() {
			if err := eb.reset().Encode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoder", func(b *testing.B) {
		enc := encoderFor[snapEntry]()
		var eb encBuf
		for b.Loop() {
			if err := enc(eb.reset(), v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appender", func(b *testing.B) {
		app := appenderFor[snapEntry]()
		var buf []byte
		for b.Loop() {
			buf = app(buf[:0], v)
		}
	})
}
