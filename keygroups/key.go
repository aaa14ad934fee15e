package keygroups

import (
	"encoding/binary"
	"reflect"
)

// Key is the set of key types weir can hash stably: strings and integers,
// including named types built on them.
type Key interface {
	~string | ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// AppendKeyBytes appends the canonical bytes of k (see the package doc) to dst
// and returns the extended slice. It does not allocate when dst has room.
func AppendKeyBytes[K Key](dst []byte, k K) []byte {
	switch v := any(k).(type) {
	case string:
		return append(dst, v...)
	case int:
		return binary.LittleEndian.AppendUint64(dst, uint64(int64(v)))
	case int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(v))
	case int32:
		return binary.LittleEndian.AppendUint64(dst, uint64(int64(v)))
	case uint64:
		return binary.LittleEndian.AppendUint64(dst, v)
	case uint32:
		return binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	rv := reflect.ValueOf(k)
	switch rv.Kind() {
	case reflect.String:
		return append(dst, rv.String()...)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(rv.Int()))
	default: // the Key constraint leaves only unsigned kinds
		return binary.LittleEndian.AppendUint64(dst, rv.Uint())
	}
}

// HashKey returns the stable hash of k: MurmurHash3 x86 32-bit, seed 0, over
// its canonical bytes. Plain string and integer keys are hashed without
// allocating.
func HashKey[K Key](k K) uint32 {
	switch v := any(k).(type) {
	case string:
		return murmur3(v, 0)
	case int:
		return murmur3Uint64(uint64(int64(v)))
	case int64:
		return murmur3Uint64(uint64(v))
	case int32:
		return murmur3Uint64(uint64(int64(v)))
	case uint64:
		return murmur3Uint64(v)
	case uint32:
		return murmur3Uint64(uint64(v))
	}
	rv := reflect.ValueOf(k)
	switch rv.Kind() {
	case reflect.String:
		return murmur3(rv.String(), 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return murmur3Uint64(uint64(rv.Int()))
	default: // the Key constraint leaves only unsigned kinds
		return murmur3Uint64(rv.Uint())
	}
}

// HashBytes returns the stable hash of a []byte key (its bytes as is). A
// []byte key and a string key with the same bytes hash alike.
func HashBytes(b []byte) uint32 {
	return murmur3(b, 0)
}

// GroupOf returns the key group of a key hash: hash % maxParallelism.
// maxParallelism must be at least 1 (see Validate).
func GroupOf(hash uint32, maxParallelism int) int {
	return int(hash % uint32(maxParallelism))
}

// KeyGroup returns the key group of k for a job with the given maxParallelism.
func KeyGroup[K Key](k K, maxParallelism int) int {
	return GroupOf(HashKey(k), maxParallelism)
}
