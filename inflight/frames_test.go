package inflight

import (
	"errors"
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// TestFramesDecodeAnyRun encodes buffers as frames and decodes every run of
// consecutive frames on its own, as a checkpoint that refers to part of an
// earlier one's channel state does; cut or extended runs are corrupt.
func TestFramesDecodeAnyRun(t *testing.T) {
	codec := plan.MsgpackCodec[int]{}
	var data []byte
	var ends []int
	for i := 0; i < 6; i++ {
		recs := make([]int, i+1)
		for k := range recs {
			recs[k] = 100*i + k
		}
		var err error
		if data, err = AppendFrame(data, codec, Batch{Seq: uint64(i + 1), Records: plan.Records[int](recs), MarkKind: WatermarkKind, MarkAt: int64(i)}); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, len(data))
	}
	start := func(i int) int {
		if i == 0 {
			return 0
		}
		return ends[i-1]
	}
	for from := 0; from < 6; from++ {
		for to := from + 1; to <= 6; to++ {
			got, gotEnds, err := DecodeFrames(codec, data[start(from):ends[to-1]], to-from, 7)
			if err != nil {
				t.Fatalf("run %d..%d: %v", from, to, err)
			}
			for k, e := range gotEnds {
				if e != ends[from+k]-start(from) {
					t.Fatalf("run %d..%d: frame %d ends at %d, want %d", from, to, k, e, ends[from+k]-start(from))
				}
			}
			for k, b := range got {
				recs, _ := plan.RecordsOf[int](b.Records)
				i := from + k
				if b.Seq != uint64(7+k) || len(recs) != i+1 || recs[0] != 100*i || b.MarkAt != int64(i) || b.MarkKind != WatermarkKind {
					t.Fatalf("run %d..%d buffer %d: seq %d records %v mark %d@%d", from, to, k, b.Seq, recs, b.MarkKind, b.MarkAt)
				}
			}
		}
	}
	for _, c := range []struct {
		name string
		data []byte
		n    int
	}{
		{"too few", data[:ends[2]], 4},
		{"too many", data[:ends[2]], 2},
		{"cut", data[:ends[2]-1], 3},
		{"garbage", []byte{0xc1, 0xc1}, 1},
	} {
		if _, _, err := DecodeFrames(codec, c.data, c.n, 1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", c.name, err)
		}
	}
}
