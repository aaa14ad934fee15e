package node

import (
	"testing"
	"time"

	"github.com/weirstream/weir/actors"
)

// TestRestoredStatesSpanBothFigures: a job counted twice on a node (its
// part and the job it coordinates) sums its restores and spans from the
// first start of either to the last end of either; a job without restores
// is left out.
func TestRestoredStatesSpanBothFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	part := actors.RestoreStats{Restores: 2, Took: 70 * time.Millisecond, First: t0.Add(5 * time.Millisecond), Last: t0.Add(45 * time.Millisecond),
		DecodedRestores: 2, Decoded: 150 * time.Millisecond, LastDecoded: t0.Add(90 * time.Millisecond)}
	coord := actors.RestoreStats{Restores: 1, Took: 30 * time.Millisecond, First: t0, Last: t0.Add(30 * time.Millisecond),
		DecodedRestores: 1, Decoded: 30 * time.Millisecond, LastDecoded: t0.Add(30 * time.Millisecond)}
	got := restoredStates(map[string][]actors.RestoreStats{"j": {part, coord}, "idle": {{}}})
	if len(got) != 1 || got[0].Job != "j" {
		t.Fatalf("restored states %+v, want job j only", got)
	}
	if r := got[0]; r.Restores != 3 || r.TookMs != 100 || r.SpanMs != 45 {
		t.Errorf("%+v: want 3 restores, 100 ms summed, 45 ms span", r)
	}
	if r := got[0]; r.Decoded != 3 || r.DecodedMs != 180 || r.DecodedSpanMs != 90 {
		t.Errorf("%+v: want 3 restores decoded, 180 ms summed, 90 ms span until decoded", r)
	}
}
