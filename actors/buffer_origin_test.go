package actors

import (
	"testing"
	"time"

	"github.com/weirstream/weir/internal/plan"
)

// TestOriginCrossesTheWireAsAnAge: a data buffer, the buffers a checkpoint
// or rescale barrier carries and the records a rescale hands off keep their
// origin across nodes as an age: back on the receiver's clock the origin is
// the sent one moved later by at most the time the trip took (the wire is
// not counted), never earlier; an unknown origin stays unknown.
func TestOriginCrossesTheWireAsAnAge(t *testing.T) {
	r, j, _, _ := rescaleWireSetup(t)
	ch := WireRef{Node: "b", ID: "node/job-remote/sink-1/in-mid-1", Kind: refChannel, Edge: 1, From: 1, To: 1}
	task := WireRef{Node: "b", ID: "node/job-remote/mid-1", Kind: refTask, Op: 1, Instance: 1}
	origin := time.Now().Add(-30 * time.Millisecond)
	buf := func() *Buffer { return &Buffer{Seq: 3, Records: plan.Records[int64]{1, 2}, origin: origin} }
	check := func(what string, before time.Time, got time.Time) {
		t.Helper()
		after := time.Now()
		if got.Before(origin) || got.After(origin.Add(after.Sub(before))) {
			t.Errorf("%s: origin %v after the trip, want %v plus at most the trip's %v", what, got, origin, after.Sub(before))
		}
	}
	before := time.Now()
	check("data", before, wireTrip(t, r, j, ch, &dataMsg{buf: buf()}).(*dataMsg).buf.origin)
	before = time.Now()
	check("checkpoint barrier's pending", before,
		wireTrip(t, r, j, ch, &barrierMsg{id: 4, lastSeq: 3, unaligned: true, pending: []*Buffer{buf()}}).(*barrierMsg).pending[0].origin)
	before = time.Now()
	check("rescale barrier's pending", before,
		wireTrip(t, r, j, ch, &rescaleBarrierMsg{lastSeq: 3, pending: []*Buffer{buf()}}).(*rescaleBarrierMsg).pending[0].origin)
	before = time.Now()
	h := wireTrip(t, r, j, task, &rescaleHandoffMsg{from: 1, groups: []int{7}, records: map[int][]heldBatch{
		7: {{edge: 0, recs: plan.Records[int64]{5}, origin: origin}}}}).(*rescaleHandoffMsg)
	check("handed-off records", before, h.records[7][0].origin)

	unknown := wireTrip(t, r, j, ch, &dataMsg{buf: &Buffer{Seq: 4, Records: plan.Records[int64]{1}}}).(*dataMsg)
	if !unknown.buf.origin.IsZero() {
		t.Errorf("a buffer of unknown origin came back with origin %v", unknown.buf.origin)
	}
}
