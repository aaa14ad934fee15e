package main

import (
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/actors"
)

// partCases are samples and their parts: held is held whatever is in
// flight; in an on phase encoding comes before storing (a streamed
// snapshot stores while it encodes), and neither is other; outside both
// phases nothing.
var partCases = []struct {
	phase             int32
	encoding, storing int64
	want              splitPart
	ok                bool
}{
	{phaseHeld, 0, 0, partHeld, true},
	{phaseHeld, 1, 1, partHeld, true},
	{phaseOn, 1, 1, partEncoding, true},
	{phaseOn, 2, 0, partEncoding, true},
	{phaseOn, 0, 1, partStoring, true},
	{phaseOn, 0, 0, partOther, true},
	{phaseWindow, 1, 1, 0, false},
}

// TestPartOf: partOf gives partCases' parts.
func TestPartOf(t *testing.T) {
	t.Parallel()
	for _, tc := range partCases {
		got, ok := partOf(tc.phase, tc.encoding, tc.storing)
		if got != tc.want || ok != tc.ok {
			t.Errorf("phase %d, %d encoding, %d storing: part %d %v, want %d %v", tc.phase, tc.encoding, tc.storing, got, ok, tc.want, tc.ok)
		}
	}
}

// TestOnSplit: a part's throughput is its rate against the held phases'
// (not its records: the parts last unequally), its share is of the on
// phases' time only, and a part, or a held phase, without time or records
// gives 0 rather than a division by zero.
func TestOnSplit(t *testing.T) {
	t.Parallel()
	var s onSplit
	s.add(partHeld, 1000, time.Second)
	s.add(partHeld, 1000, time.Second)             // held: 1000/s over 2 s
	s.add(partEncoding, 400, 500*time.Millisecond) // 800/s
	s.add(partStoring, 225, 250*time.Millisecond)  // 900/s
	s.add(partOther, 1250, 1250*time.Millisecond)  // 1000/s
	for _, tc := range []struct {
		p         splitPart
		vs, share float64
	}{
		{partEncoding, 80, 25},
		{partStoring, 90, 12.5},
		{partOther, 100, 62.5},
	} {
		if got := s.vsHeld(tc.p); got != tc.vs {
			t.Errorf("part %d: %v %% of held, want %v", tc.p, got, tc.vs)
		}
		if got := s.shareOfOn(tc.p); got != tc.share {
			t.Errorf("part %d: %v %% of the on time, want %v", tc.p, got, tc.share)
		}
	}
	line := splitProgress(s)
	if want := "encoding 25.0 % of the time at 80.0 % of held, storing 12.5 % at 90.0 %, other 62.5 % at 100.0 %"; !strings.Contains(line, want) {
		t.Errorf("progress %q, want it to say %q", line, want)
	}
	var row stateBenchRow
	row.fillSplit(s)
	if row.EncodingVsHeldPct != 80 || row.EncodingSharePct != 25 || row.StoringVsHeldPct != 90 || row.StoringSharePct != 12.5 || row.OtherVsHeldPct != 100 {
		t.Errorf("row %+v", row)
	}

	var empty onSplit
	if empty.vsHeld(partEncoding) != 0 || empty.shareOfOn(partEncoding) != 0 || splitProgress(empty) != "" {
		t.Errorf("no samples: %v %%, %v %%, %q; want 0, 0 and no progress", empty.vsHeld(partEncoding), empty.shareOfOn(partEncoding), splitProgress(empty))
	}
	var noHeld onSplit
	noHeld.add(partEncoding, 10, time.Second)
	noHeld.add(partHeld, 0, time.Second)
	if got := noHeld.vsHeld(partEncoding); got != 0 {
		t.Errorf("held phases without records: %v %%, want 0", got)
	}
}

// TestSplitSampler: the sampler files the records processed since its
// start under the part its last sample finds (stop takes one), none
// outside the held and on phases, ends its
// goroutine at stop, and may be stopped again (alternateHeld stops it on
// every return).
func TestSplitSampler(t *testing.T) {
	t.Parallel()
	for _, tc := range partCases {
		sh := new(stateShared)
		var m actors.Metrics
		m.SnapshotsEncoding.Store(tc.encoding)
		m.BlobsStoring.Store(tc.storing)
		sh.phase.Store(tc.phase)
		s := startSplit(sh, &m)
		sh.processed.Add(500)
		got := s.stop()
		if again := s.stop(); again != got {
			t.Errorf("stopped again: %+v, want %+v", again, got)
		}
		for p := range splitParts {
			want := int64(0)
			if tc.ok && p == tc.want {
				want = 500
			}
			if got.records[p] != want {
				t.Errorf("phase %d, %d encoding, %d storing: %d records in part %d, want %d", tc.phase, tc.encoding, tc.storing, got.records[p], p, want)
			}
		}
	}
}
