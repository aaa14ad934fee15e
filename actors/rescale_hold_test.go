package actors

import (
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// TestRecordBytes: a record's estimate counts what its strings and slices
// hold, not only their headers; a grouped batch's records count as the
// same records.
func TestRecordBytes(t *testing.T) {
	type event struct {
		Key string
		Due int64
	}
	type padded struct {
		N   int64
		Pad []byte
		Ids []string
	}
	for _, tc := range []struct {
		name string
		b    plan.Batch
		want int64
	}{
		{"empty", plan.Records[int64]{}, 0},
		{"int64", plan.Records[int64]{7, 8}, 8},
		{"string key and int64", plan.Records[event]{{Key: "key-00042", Due: 1}}, 16 + 9 + 8},
		{"grouped", plan.Grouped[event]{Recs: []event{{Key: "abc", Due: 1}}, Groups: []uint16{3}}, 16 + 3 + 8},
		{"byte slice and strings", plan.Records[padded]{{N: 1, Pad: make([]byte, 1000), Ids: []string{"ab", "cde"}}}, 8 + 24 + 1000 + 24 + 16 + 2 + 16 + 3},
	} {
		if got := recordBytes(tc.b); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.name, got, tc.want)
		}
	}
}
