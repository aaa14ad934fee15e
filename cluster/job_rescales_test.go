package cluster

import "testing"

// TestRescaleHistory: a history keeps the latest MaxRecordedRescales
// rescales and counts them all; an outcome is written only to the running
// rescale of its coordinator; a lost coordinator's running rescale becomes
// interrupted, another's stays; a history read once is never changed.
func TestRescaleHistory(t *testing.T) {
	var h *RescaleHistory
	for seq := uint64(1); seq <= MaxRecordedRescales+2; seq++ {
		h = h.Planned(RescaleEntry{Seq: seq, Coordinator: "n1", State: RescaleRunning})
		h = h.Ended("n1", seq, RescaleCommitted, "", &RescaleFigures{Moved: int(seq)})
	}
	if h.Count != MaxRecordedRescales+2 || len(h.Recent) != MaxRecordedRescales || h.Recent[0].Seq != 3 || h.Latest().Seq != MaxRecordedRescales+2 {
		t.Fatalf("after %d rescales: count %d, %d recent, first #%d", MaxRecordedRescales+2, h.Count, len(h.Recent), h.Recent[0].Seq)
	}
	read := h.Planned(RescaleEntry{Seq: 20, Coordinator: "n2", State: RescaleRunning})
	for _, tc := range []struct {
		coord string
		seq   uint64
		want  string
	}{
		{"n1", 20, RescaleRunning}, // another coordinator's rescale 20
		{"n2", 19, RescaleRunning}, // a rescale never recorded
		{"n2", 20, RescaleFailed},
	} {
		got := read.Ended(tc.coord, tc.seq, RescaleFailed, "aborted", nil)
		if got.Latest().State != tc.want {
			t.Errorf("Ended(%s, %d): latest is %s, want %s", tc.coord, tc.seq, got.Latest().State, tc.want)
		}
	}
	if read.Latest().State != RescaleRunning {
		t.Fatalf("Ended changed the history it was given: %+v", read.Latest())
	}
	if got := read.Interrupted("n1"); got.Latest().State != RescaleRunning {
		t.Fatalf("n1's loss interrupted n2's rescale: %+v", got.Latest())
	}
	got := read.Interrupted("n2")
	if l := got.Latest(); l.State != RescaleInterrupted || l.Error == "" || read.Latest().State != RescaleRunning {
		t.Fatalf("n2's loss: %+v (the history given: %+v)", l, read.Latest())
	}
	for _, e := range got.Recent[:len(got.Recent)-1] {
		if e.State != RescaleCommitted {
			t.Fatalf("a committed rescale became %s", e.State)
		}
	}
	if (*RescaleHistory)(nil).Latest() != nil {
		t.Fatal("an empty history has a latest rescale")
	}
}
