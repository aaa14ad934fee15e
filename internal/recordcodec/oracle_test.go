package recordcodec

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// sameAsLibrary decodes data with c and with msgpack.Unmarshal: both must
// fail, or both succeed with equal values. Only call it on input the library
// can take (see librarySafe).
func sameAsLibrary[T any](c *Codec[T], data []byte) error {
	got, err := c.DecodeBatch(data)
	var want []T
	libErr := msgpack.Unmarshal(data, &want)
	switch {
	case err != nil && libErr != nil:
		return nil
	case err != nil:
		return fmt.Errorf("DecodeBatch failed (%v), the library decoded %d records", err, len(want))
	case libErr != nil:
		return fmt.Errorf("DecodeBatch decoded %d records, the library failed (%v)", len(got), libErr)
	}
	return equalBatches(got, want)
}

// equalBatches compares two decoded batches. Values that differ only as NaNs
// do (same bits, never ==) count as equal: msgpack.Marshal, which tells nil
// from empty and keeps float bits, is the second opinion.
func equalBatches[T any](got, want []T) error {
	if reflect.DeepEqual(got, want) {
		return nil
	}
	gb, err1 := msgpack.Marshal(got)
	wb, err2 := msgpack.Marshal(want)
	if err1 == nil && err2 == nil && bytes.Equal(gb, wb) {
		return nil
	}
	if (got == nil) != (want == nil) || len(got) != len(want) {
		return fmt.Errorf("got %d records (nil %t), want %d (nil %t)", len(got), got == nil, len(want), want == nil)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Errorf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	return fmt.Errorf("batches differ")
}

// librarySafe says whether msgpack.Unmarshal can be given data without
// risking a huge allocation from a lying length prefix: the library's own
// Skip reads in bounded chunks and fails on such input, and input it cannot
// skip is input it cannot decode either.
func librarySafe(data []byte) bool {
	return msgpack.NewDecoder(bytes.NewReader(data)).Skip() == nil
}

// errorf is fmt.Errorf, for brevity in checks.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
