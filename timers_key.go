package weir

import (
	"encoding/binary"
	"reflect"

	"github.com/weirstream/weir/keygroups"
)

// keyFromString turns canonical key bytes (keygroups.AppendKeyBytes) back
// into the key: the timer table stores keys as those bytes.
func keyFromString[K keygroups.Key](s string) K {
	var k K
	rv := reflect.ValueOf(&k).Elem()
	switch rv.Kind() {
	case reflect.String:
		rv.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if len(s) == 8 {
			rv.SetInt(int64(binary.LittleEndian.Uint64([]byte(s))))
		}
	default:
		if len(s) == 8 {
			rv.SetUint(binary.LittleEndian.Uint64([]byte(s)))
		}
	}
	return k
}
