package recordcodec

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
)

// Record shapes the tests run through both codecs.

// event is the shape weir's benchmark batches carry.
type event struct {
	Key string `msgpack:"k"`
	Seq int64  `msgpack:"i"`
}

// count is a keyed count as an aggregation emits it.
type count struct {
	Key   string `msgpack:"k"`
	Count int64  `msgpack:"n"`
}

// myString and myInt are named kinds without methods.
type (
	myString string
	myInt    int32
	myByte   uint8
)

// allKinds has a field of every supported kind, tagged and untagged, plus
// fields the library leaves out.
type allKinds struct {
	B      bool
	I      int     `msgpack:"int"`
	I8     int8    `msgpack:"i8"`
	I16    int16   `msgpack:"i16"`
	I32    int32   `msgpack:"i32"`
	I64    int64   `msgpack:"i64"`
	U      uint    `msgpack:"uint"`
	U8     uint8   `msgpack:"u8"`
	U16    uint16  `msgpack:"u16"`
	U32    uint32  `msgpack:"u32"`
	U64    uint64  `msgpack:"u64"`
	F32    float32 `msgpack:"f32"`
	F64    float64 `msgpack:"f64"`
	S      string  `msgpack:"s"`
	Bytes  []byte  `msgpack:"bytes"`
	Named  myString
	NamedI myInt
	NamedB []myByte
	Skip   string `msgpack:"-"`
	hidden int
}

// inner and nested make a struct in a struct in a struct.
type inner struct {
	A int16  `msgpack:"a"`
	S string `msgpack:"s"`
}

type middle struct {
	In  inner `msgpack:"in"`
	Tag string
}

type nested struct {
	ID  uint64 `msgpack:"id"`
	Mid middle `msgpack:"mid"`
	In  inner  `msgpack:"in"`
	Ok  bool   `msgpack:"ok"`
}

// many has enough fields for key lookup by map.
type many struct {
	F0, F1, F2, F3, F4, F5, F6, F7, F8, F9 int8
	G0, G1, G2, G3, G4, G5, G6, G7         string
}

// empty has no encoded field at all.
type empty struct {
	_ int
	x string
}

// gen draws values with edge cases mixed in. long allows strings and byte
// slices of up to 70000 bytes.
type gen struct {
	r    *rand.Rand
	long bool
}

// edgeInts are the edges of every integer width and of msgpack's fixnums.
var edgeInts = []int64{
	0, 1, -1, 127, 128, -32, -33, 255, 256, -128, -129,
	math.MaxInt8, math.MinInt8, math.MaxUint8, math.MaxInt16, math.MinInt16,
	math.MaxUint16, math.MaxInt32, math.MinInt32, math.MaxUint32,
	math.MaxInt64, math.MinInt64,
}

func (g gen) int64() int64 {
	switch g.r.IntN(4) {
	case 0:
		return edgeInts[g.r.IntN(len(edgeInts))]
	case 1:
		return int64(g.r.IntN(300)) - 150
	default:
		return int64(g.r.Uint64())
	}
}

func (g gen) uint64() uint64 {
	switch g.r.IntN(4) {
	case 0:
		return uint64(edgeInts[g.r.IntN(len(edgeInts))])
	case 1:
		return uint64(g.r.IntN(300))
	case 2:
		return math.MaxUint64 - uint64(g.r.IntN(3))
	default:
		return g.r.Uint64()
	}
}

func (g gen) float64() float64 {
	switch g.r.IntN(6) {
	case 0:
		return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}[g.r.IntN(6)]
	case 1:
		return float64(g.r.IntN(100))
	default:
		return g.r.NormFloat64() * 1e6
	}
}

// stringLens cover every msgpack string header: fixstr, str8, str16, str32.
var stringLens = []int{0, 1, 31, 32, 255, 256, 65535, 65536, 70000}

func (g gen) string() string {
	n := g.r.IntN(12)
	if g.long && g.r.IntN(20) == 0 {
		n = stringLens[g.r.IntN(len(stringLens))]
	}
	var sb strings.Builder
	for range n {
		sb.WriteByte(byte('a' + g.r.IntN(26)))
	}
	if g.r.IntN(10) == 0 {
		sb.WriteString("é✓") // multi-byte UTF-8
	}
	return sb.String()
}

func (g gen) bytes() []byte {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	n := g.r.IntN(20)
	if g.long && g.r.IntN(20) == 0 {
		n = stringLens[g.r.IntN(len(stringLens))]
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

// fill sets v, of any supported shape, to random values.
func (g gen) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(g.r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(g.int64()) // truncates to the width, edges of narrower widths included
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(g.uint64())
	case reflect.Float32, reflect.Float64:
		v.SetFloat(g.float64())
	case reflect.String:
		v.SetString(g.string())
	case reflect.Slice:
		b := g.bytes()
		if b == nil {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), len(b), len(b))
		for i, x := range b {
			s.Index(i).SetUint(uint64(x))
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				g.fill(f)
			}
		}
	}
}

// batchOf draws a batch of T: nil, empty, up to 40 records with long
// values, or now and then 16 short ones (an array16 header).
func batchOf[T any](g gen) []T {
	switch g.r.IntN(10) {
	case 0:
		return nil
	case 1:
		return []T{}
	}
	n := g.r.IntN(40)
	g.long = true
	if g.r.IntN(20) == 0 {
		n, g.long = 16, false
	}
	out := make([]T, n)
	for i := range out {
		g.fill(reflect.ValueOf(&out[i]).Elem())
	}
	return out
}

// reflectValue is reflect.ValueOf(p).Elem().
func reflectValue[T any](p *T) reflect.Value { return reflect.ValueOf(p).Elem() }
