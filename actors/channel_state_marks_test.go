package actors

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
)

// TestCapturedBufferReplaysItsMark: the rest of a buffer in progress, taken
// into channel state at a snapshot, keeps the watermark that follows its
// records, and restoring that channel state replays the records with the
// mark after them (before, both the remainder and the encoding dropped it,
// so a restored consumer's event time lagged the undisturbed one's and a
// replayed record could be judged late differently).
func TestCapturedBufferReplaysItsMark(t *testing.T) {
	mark := Mark{Kind: WatermarkMark, At: 42_000}
	c := &inChannel{cur: &Buffer{Seq: 9, Records: plan.Records[int]{1, 2, 3}, Mark: mark, round: 3}, curDone: 1}
	rest := c.remainder()
	if rest.Mark != mark {
		t.Fatalf("remainder's mark %+v, want %+v", rest.Mark, mark)
	}
	idle := &Buffer{Seq: 10, Records: plan.Records[int]{4}, Mark: Mark{Kind: IdleMark}}
	codec := plan.MsgpackCodec[int]{}
	data, _, err := inflight.Encode(codec, []inflight.Batch{capturedBatch(1, rest), capturedBatch(2, idle)})
	if err != nil {
		t.Fatal(err)
	}
	batches, err := inflight.Decode(codec, data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range batches {
		r := replayBuffer(b, false)
		got = append(got, fmt.Sprintf("seq %d %v mark %+v", r.Seq, r.Records, r.Mark))
	}
	want := []string{fmt.Sprintf("seq 1 [2 3] mark %+v", mark), fmt.Sprintf("seq 2 [4] mark %+v", Mark{Kind: IdleMark})}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
}

// TestWatermarkKindMatchesInflight: channel state stores a buffer's mark
// kind as a number, and redistribution recognises watermarks by it.
func TestWatermarkKindMatchesInflight(t *testing.T) {
	if uint8(WatermarkMark) != inflight.WatermarkKind {
		t.Fatalf("WatermarkMark is %d, inflight.WatermarkKind %d", WatermarkMark, inflight.WatermarkKind)
	}
}
