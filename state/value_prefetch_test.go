package state

import (
	"slices"
	"testing"
	"unsafe"
)

// TestRefOffsets checks which headers the encoder hints at for each kind
// of value: those of a plain struct's strings and byte slices, a string's
// or byte slice's own, and none for values that refer to nothing or that
// msgpack encodes by reflection.
func TestRefOffsets(t *testing.T) {
	type plain struct {
		N int64  `msgpack:"n"`
		B []byte `msgpack:"b"`
		F float64
		S string `msgpack:"s,omitempty"`
	}
	type scalars struct {
		A int64
		B bool
	}
	type nested struct {
		In []int
	}
	var p plain
	for _, c := range []struct {
		name string
		got  []uintptr
		want []uintptr
	}{
		{"plain struct", refOffsets[plain](), []uintptr{unsafe.Offsetof(p.B), unsafe.Offsetof(p.S)}},
		{"string", refOffsets[string](), []uintptr{0}},
		{"bytes", refOffsets[[]byte](), []uintptr{0}},
		{"int", refOffsets[int64](), nil},
		{"scalar struct", refOffsets[scalars](), nil},
		{"not plain", refOffsets[nested](), nil},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: offsets %v, want %v", c.name, c.got, c.want)
		}
	}
	b := NewBackend(4)
	tb := NewValueTable[plain]("p", 4)
	if _, err := b.Register(tb); err != nil {
		t.Fatal(err)
	}
	tb.Put(0, "k", plain{B: []byte("x")})
	s, err := b.SnapshotAsync([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release(b)
	if tb.core.cow.codec.prefetch == nil {
		t.Error("a value table of a struct with a byte slice gives its snapshot no prefetch")
	}
}
