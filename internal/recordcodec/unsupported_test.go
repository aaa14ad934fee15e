package recordcodec

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Shapes For must refuse.
type (
	withPointer   struct{ P *int }
	withMap       struct{ M map[string]int }
	withSlice     struct{ S []event }
	withInts      struct{ S []int }
	withArray     struct{ A [4]byte }
	withInterface struct{ V any }
	withOmitEmpty struct {
		K string `msgpack:"k,omitempty"`
	}
	withAlias struct {
		K string `msgpack:"k,alias:key"`
	}
	withNameOnlyComma struct {
		K string `msgpack:"k,"`
	}
	withQuotedTag struct {
		K string `msgpack:"'k'"`
	}
	asArray struct {
		_msgpack struct{} `msgpack:",as_array"`
		K        string
	}
	withEmbedded struct {
		event
		X int
	}
	withEmbeddedExported struct {
		Inner inner `msgpack:",inline"`
	}
	withTime      struct{ T time.Time }
	withDuplicate struct {
		A string `msgpack:"x"`
		B string `msgpack:"x"`
	}
	withTagNamedLikeField struct {
		A string `msgpack:"B"`
		B string
	}
	withUintptr   struct{ U uintptr }
	withComplex   struct{ C complex128 }
	withNestedBad struct{ In withPointer }
)

// customEnc implements msgpack.CustomEncoder (and CustomDecoder).
type customEnc struct{ X int }

func (c customEnc) EncodeMsgpack(e *msgpack.Encoder) error  { return e.EncodeInt(int64(c.X)) }
func (c *customEnc) DecodeMsgpack(d *msgpack.Decoder) error { return d.Decode(&c.X) }

// marshaler implements msgpack.Marshaler on the pointer.
type marshaler struct{ X int }

func (m *marshaler) MarshalMsgpack() ([]byte, error) { return msgpack.Marshal(m.X) }

// binaryKey implements encoding.BinaryMarshaler; it is a string kind.
type binaryKey string

func (k binaryKey) MarshalBinary() ([]byte, error) { return []byte(k), nil }

// textKey implements encoding.TextUnmarshaler only.
type textKey int

func (k *textKey) UnmarshalText([]byte) error { return nil }

// registered is a plain struct given its own encoder with msgpack.Register;
// only For's self-check can notice.
type registered struct{ X int }

func init() {
	msgpack.Register(registered{},
		func(e *msgpack.Encoder, v reflect.Value) error { return e.EncodeString("registered") },
		func(d *msgpack.Decoder, v reflect.Value) error { _, err := d.DecodeString(); return err })
}

// TestUnsupported checks that For refuses what it cannot reproduce.
func TestUnsupported(t *testing.T) {
	for name, ok := range map[string]bool{
		"*event":                 supported[*event](),
		"map":                    supported[map[string]int](),
		"[]int":                  supported[[]int](),
		"[]event":                supported[[]event](),
		"[4]byte":                supported[[4]byte](),
		"any":                    supported[any](),
		"uintptr":                supported[uintptr](),
		"complex64":              supported[complex64](),
		"chan":                   supported[chan int](),
		"func":                   supported[func()](),
		"pointer field":          supported[withPointer](),
		"map field":              supported[withMap](),
		"slice of structs field": supported[withSlice](),
		"slice of ints field":    supported[withInts](),
		"array field":            supported[withArray](),
		"interface field":        supported[withInterface](),
		"omitempty":              supported[withOmitEmpty](),
		"alias":                  supported[withAlias](),
		"empty option":           supported[withNameOnlyComma](),
		"quoted tag":             supported[withQuotedTag](),
		"as_array":               supported[asArray](),
		"embedded":               supported[withEmbedded](),
		"inline":                 supported[withEmbeddedExported](),
		"time.Time field":        supported[withTime](),
		"time.Time":              supported[time.Time](),
		"duplicate names":        supported[withDuplicate](),
		"tag shadows a field":    supported[withTagNamedLikeField](),
		"uintptr field":          supported[withUintptr](),
		"complex field":          supported[withComplex](),
		"bad nested struct":      supported[withNestedBad](),
		"CustomEncoder":          supported[customEnc](),
		"Marshaler on pointer":   supported[marshaler](),
		"BinaryMarshaler kind":   supported[binaryKey](),
		"TextUnmarshaler field":  supported[struct{ K textKey }](),
		"Register-ed struct":     supported[registered](),
		"Register-ed field":      supported[struct{ R registered }](),
	} {
		if ok {
			t.Errorf("For accepted %s", name)
		}
	}
	for name, ok := range map[string]bool{
		"event": supported[event](), "allKinds": supported[allKinds](), "nested": supported[nested](),
		"many": supported[many](), "empty": supported[empty](), "struct{}": supported[struct{}](), "string": supported[string](),
		"[]byte": supported[[]byte](), "uint8": supported[uint8](), "myByte": supported[myByte](),
		"anonymous struct": supported[struct {
			A int `msgpack:"a"`
		}](),
	} {
		if !ok {
			t.Errorf("For refused %s", name)
		}
	}
}

func supported[T any]() bool {
	_, ok := For[T]()
	return ok
}

// TestForCaches checks that For compiles once per type.
func TestForCaches(t *testing.T) {
	a, _ := For[event]()
	b, _ := For[event]()
	if a != b {
		t.Error("For[event] built two codecs")
	}
	if c, ok := For[withPointer](); c != nil || ok {
		t.Errorf("For[withPointer] = %v, %t", c, ok)
	}
}

// TestConcurrentUse shares one codec between goroutines, each with its own
// Strings (run with -race).
func TestConcurrentUse(t *testing.T) {
	recs := []nested{{ID: 1, Mid: middle{Tag: "a", In: inner{A: 2, S: "b"}}}, {ID: 3}}
	want := mpc(recs)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, _ := For[nested]()
			strs := new(Strings)
			for range 200 {
				b, err := c.AppendBatch(nil, recs)
				if err != nil || string(b) != string(want) {
					t.Errorf("AppendBatch = % x, %v", b, err)
					return
				}
				out, err := c.DecodeBatch(b)
				if err != nil || !reflect.DeepEqual(out, recs) {
					t.Errorf("DecodeBatch = %+v, %v", out, err)
					return
				}
				out, err = c.DecodeBatchWith(out, b, strs)
				if err != nil || !reflect.DeepEqual(out, recs) {
					t.Errorf("DecodeBatchWith = %+v, %v", out, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestStructFieldRules checks structFields on its own, without For's
// self-check behind it.
func TestStructFieldRules(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[withEmbedded](), reflect.TypeFor[withEmbeddedExported](),
		reflect.TypeFor[withOmitEmpty](), reflect.TypeFor[withAlias](), reflect.TypeFor[withNameOnlyComma](),
		reflect.TypeFor[withQuotedTag](), reflect.TypeFor[asArray](), reflect.TypeFor[withDuplicate](),
		reflect.TypeFor[withTagNamedLikeField](), reflect.TypeFor[struct {
			A int `msgpack:" a"`
		}](),
	} {
		if infos, err := structFields(typ); err == nil {
			t.Errorf("structFields(%s) = %+v, want an error", typ, infos)
		}
	}
	infos, err := structFields(reflect.TypeFor[allKinds]())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.name)
	}
	want := []string{"B", "int", "i8", "i16", "i32", "i64", "uint", "u8", "u16", "u32", "u64",
		"f32", "f64", "s", "bytes", "Named", "NamedI", "NamedB"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("allKinds names = %q, want %q", names, want)
	}
}
