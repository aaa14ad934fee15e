package actors

import "github.com/weirstream/weir/inflight"

// capturedBatch is buffer b as channel state, numbered seq: its records, its
// replay round and the mark that followed its records, so that a restore
// replays the watermark where it travelled.
func capturedBatch(seq uint64, b *Buffer) inflight.Batch {
	return inflight.Batch{Seq: seq, Records: b.Records, Round: b.round, MarkKind: uint8(b.Mark.Kind), MarkAt: b.Mark.At}
}

// replayBuffer is restored channel state as a buffer to replay, its mark
// after its records. shared says its batch is shared with other consumers'
// replays and must never be recycled.
func replayBuffer(b inflight.Batch, shared bool) *Buffer {
	return &Buffer{Seq: b.Seq, Records: b.Records, captured: shared, round: b.Round,
		Mark: Mark{Kind: MarkKind(b.MarkKind), At: b.MarkAt}}
}
