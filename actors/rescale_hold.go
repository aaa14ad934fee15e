package actors

import (
	"reflect"

	"github.com/weirstream/weir/internal/plan"
)

// recordBytes estimates the memory of one record of b, for the hold budget
// of a live rescale: the size of b's first record, with the bytes its
// strings, slices, pointers and maps hold (to maxSizeDepth). Every record
// of b is taken to be as large (records of one edge have one type; their
// keys' lengths vary).
func recordBytes(b plan.Batch) int64 {
	if b == nil || b.Len() == 0 {
		return 0
	}
	return sizeOf(reflect.ValueOf(b.At(0)), 0)
}

// maxSizeDepth bounds how deep sizeOf follows pointers, slices and maps.
const maxSizeDepth = 3

// sizeOf is v's size with what its strings, slices, pointers and maps
// hold, followed to maxSizeDepth.
func sizeOf(v reflect.Value, depth int) int64 {
	if !v.IsValid() {
		return 0
	}
	n := int64(v.Type().Size())
	if depth >= maxSizeDepth {
		return n
	}
	switch v.Kind() {
	case reflect.String:
		n += int64(v.Len())
	case reflect.Slice:
		if flat(v.Type().Elem()) {
			return n + int64(v.Len())*int64(v.Type().Elem().Size())
		}
		for i := 0; i < v.Len(); i++ {
			n += sizeOf(v.Index(i), depth+1)
		}
	case reflect.Array:
		n = 0
		for i := 0; i < v.Len(); i++ {
			n += sizeOf(v.Index(i), depth+1)
		}
	case reflect.Struct:
		n = 0
		for i := 0; i < v.NumField(); i++ {
			n += sizeOf(v.Field(i), depth)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n += sizeOf(v.Elem(), depth+1)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			n += sizeOf(it.Key(), depth+1) + sizeOf(it.Value(), depth+1)
		}
	}
	return n
}

// flat reports whether t holds no pointers: its size is all of it.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}
