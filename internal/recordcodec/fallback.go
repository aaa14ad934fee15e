package recordcodec

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// decodeWithLibrary decodes data with msgpack.Unmarshal, for input the
// compiled decoders leave to it, so that the result or the error is the
// library's.
//
// The library trusts length prefixes: it allocates a whole bin's length, and
// a whole array's element count, before reading them, and it skips unknown
// values recursively. So the first value is walked first: if it is cut
// short, announces more than the bytes left or nests deeper than
// maxDepth, that is the error, and the library never sees it. A
// value the library decodes successfully is always complete, so this only
// turns the library's own failures (or crashes) into errors.
func decodeWithLibrary[T any](data []byte) ([]T, error) {
	if _, err := skipValue(data, 0); err != nil {
		return nil, fmt.Errorf("decode batch: %w", err)
	}
	var out []T
	if err := msgpack.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode batch: %w", err)
	}
	return out, nil
}
