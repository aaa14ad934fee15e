package state

import (
	"reflect"
	"unsafe"

	"github.com/weirstream/weir/internal/prefetch"
)

// refOffsets returns the offsets in T of the string and byte slice headers
// whose bytes encoding a T reads besides the T itself: T's own header when
// T is a string or a byte slice, those of a plain struct's string and byte
// slice fields; none for other types.
func refOffsets[T any]() []uintptr {
	switch any(*new(T)).(type) {
	case string, []byte:
		return []uintptr{0}
	}
	s := plainStructFor[T]()
	if s == nil {
		return nil
	}
	var offs []uintptr
	for _, f := range s.fields {
		if f.kind == reflect.String || f.kind == reflect.Slice {
			offs = append(offs, f.off)
		}
	}
	return offs
}

// prefetchRefs hints that the bytes of the headers at offs in the value at
// p will be read soon (prefetch.Bytes). The value may be changing on
// another goroutine: the hint reads nothing the program sees.
func prefetchRefs(p unsafe.Pointer, offs []uintptr) {
	for _, off := range offs {
		prefetch.Bytes(unsafe.Add(p, off))
	}
}
