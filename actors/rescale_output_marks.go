package actors

import "github.com/weirstream/weir/internal/plan"

// EmptyBatch is the writer's empty batch, which carries a watermark or an
// idle mark on a channel with no records to go with it (nil if the writer
// has none). Without it a producer that had switched at a rescale could
// send no watermark, and failed.
func (f firstChannels) EmptyBatch() plan.Batch {
	if e, ok := f.EdgeWriter.(interface{ EmptyBatch() plan.Batch }); ok {
		return e.EmptyBatch()
	}
	return nil
}

// retiredChannel reports whether channel c of an edge leads to a consumer a
// live rescale removed: after the producer's switch it carries nothing more
// (no record and no mark; the consumer takes none once it has handed off),
// only what waited in it for credit.
func retiredChannel(oe *outEdge, c int) bool {
	fc, ok := oe.writer.(firstChannels)
	return ok && c >= fc.n
}
