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

// TestSplitCores: a part's cores are its CPU time over its wall time, the
// process's and the machine's apart; a part without time has none; the
// progress line gives every part in splitPart's order and nothing without
// held phases.
func TestSplitCores(t *testing.T) {
	t.Parallel()
	var s onSplit
	s.add(partHeld, 100, 2*time.Second)
	s.addCPU(partHeld, 1800*time.Millisecond, 2*time.Second) // 0.9 and 1.0
	s.add(partEncoding, 10, 500*time.Millisecond)
	s.addCPU(partEncoding, 900*time.Millisecond, 990*time.Millisecond) // 1.8 and 1.98
	s.add(partOther, 10, time.Second)
	s.addCPU(partOther, time.Second, 1100*time.Millisecond) // 1.0 and 1.1
	for _, tc := range []struct {
		p             splitPart
		process, mach float64
	}{
		{partHeld, 0.9, 1},
		{partEncoding, 1.8, 1.98},
		{partStoring, 0, 0},
		{partOther, 1, 1.1},
	} {
		if proc, mach := s.cores(tc.p); proc != tc.process || mach != tc.mach {
			t.Errorf("part %d: %v and %v cores, want %v and %v", tc.p, proc, mach, tc.process, tc.mach)
		}
	}
	if got, want := coresProgress("paced", s), "; paced, cores busy (process/machine): held 0.90/1.00 encoding 1.80/1.98 storing 0.00/0.00 other 1.00/1.10"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	var noHeld onSplit
	noHeld.add(partEncoding, 10, time.Second)
	noHeld.addCPU(partEncoding, time.Second, time.Second)
	if got := coresProgress("fast", noHeld); got != "" {
		t.Errorf("no held phases: progress %q, want none", got)
	}
	if coresOf(noHeld) != nil {
		t.Errorf("no held phases: cores %+v, want none", coresOf(noHeld))
	}
}

// TestMergeCores: each figure of each run is the median over the rounds'
// rows that have it (a row without held phases, as none's, has none), and a
// run no row has stays nil.
func TestMergeCores(t *testing.T) {
	t.Parallel()
	split := func(heldProc, encMach float64) onSplit {
		var s onSplit
		s.add(partHeld, 1, time.Second)
		s.addCPU(partHeld, time.Duration(heldProc*float64(time.Second)), time.Second)
		s.add(partEncoding, 1, time.Second)
		s.addCPU(partEncoding, time.Second, time.Duration(encMach*float64(time.Second)))
		return s
	}
	rows := make([]stateBenchRow, 4)
	rows[0].fillCores(split(0.5, 1.5), onSplit{})
	rows[1].fillCores(split(0.7, 1.9), onSplit{})
	rows[2].fillCores(split(0.9, 1.7), onSplit{})
	rows[3].fillCores(onSplit{}, onSplit{}) // no held phases: nothing
	if rows[3].CoresBusy != nil {
		t.Fatalf("a row without held phases has cores %+v", rows[3].CoresBusy)
	}
	m := mergeCores(rows)
	if m == nil || m.Fast == nil {
		t.Fatalf("merged %+v, want the fast run's medians", m)
	}
	if m.Paced != nil {
		t.Errorf("paced %+v, want nil: no row has it", m.Paced)
	}
	if m.Fast.Held.Process != 0.7 || m.Fast.Held.Machine != 1 || m.Fast.Encoding.Machine != 1.7 || m.Fast.Encoding.Process != 1 {
		t.Errorf("fast %+v, want held 0.7/1, encoding 1/1.7", *m.Fast)
	}
	if mergeCores(rows[3:]) != nil {
		t.Errorf("rows without cores merged into %+v, want nil", mergeCores(rows[3:]))
	}
}

// TestSplitSamplerCPU: the CPU time a goroutine spends spinning while the
// sampler samples a held phase is filed under held, for the process and
// for the machine, and under no other part.
func TestSplitSamplerCPU(t *testing.T) {
	t.Parallel()
	sh := new(stateShared)
	var m actors.Metrics
	sh.phase.Store(phaseHeld)
	s := startSplit(sh, &m)
	for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
	}
	got := s.stop()
	if got.cpu[partHeld] <= 0 || got.machine[partHeld] <= 0 {
		t.Errorf("held: %v of the process's CPU, %v of the machine's, want both above 0 after 60 ms of spinning", got.cpu[partHeld], got.machine[partHeld])
	}
	for p := partEncoding; p < splitParts; p++ {
		if got.cpu[p] != 0 || got.machine[p] != 0 || got.time[p] != 0 {
			t.Errorf("part %d: %v, %v CPU over %v, want nothing", p, got.cpu[p], got.machine[p], got.time[p])
		}
	}
}
