package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/samples/backpressure"
)

func TestBackpressurePlotHasABarPerSleepAndMode(t *testing.T) {
	rows := []backpressure.BenchRow{
		{SleepMs: 0, Mode: "none", RecordsPerS: 1e6},
		{SleepMs: 0, Mode: "aligned", CheckpointMsP50: 40, CheckpointMsP95: 50},
		{SleepMs: 0, Mode: "unaligned", CheckpointMsP50: 20, CheckpointMsP95: 30},
		{SleepMs: 0.1, Mode: "aligned", CheckpointMsP50: 3000, CheckpointMsP95: 3600},
		{SleepMs: 0.1, Mode: "unaligned", CheckpointMsP50: 25, CheckpointMsP95: 31},
	}
	c := backpressurePlot(rows)
	if got := strings.Join(c.Categories, " "); got != "0 0.1" {
		t.Fatalf("categories %q, want the sleeps 0 0.1", got)
	}
	if len(c.Series) != 2 || c.Series[0].Name != "aligned" || c.Series[1].Name != "unaligned" {
		t.Fatalf("series %+v, want aligned and unaligned (none has no checkpoints)", c.Series)
	}
	if c.Series[0].Values[1] != 3000 || c.Series[0].Upper[1] != 3600 || c.Series[1].Values[0] != 20 {
		t.Fatalf("values %+v", c.Series)
	}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
}

func TestWireTraceBucketsAroundTheKill(t *testing.T) {
	tr := &wireTrace{}
	t0 := time.Unix(100, 0)
	for i := range 4 { // 4 messages in the first bucket
		tr.note(t0.Add(time.Duration(i) * time.Millisecond))
	}
	tr.note(t0.Add(3 * traceBucket)) // one in the fourth
	tr.mark(t0.Add(2*traceBucket), t0.Add(3*traceBucket))
	s := tr.series("kill")
	want := []float64{4 / traceBucket.Seconds(), 0, 0, 1 / traceBucket.Seconds()}
	if len(s.Y) != len(want) {
		t.Fatalf("buckets %v, want %v", s.Y, want)
	}
	for i := range want {
		if s.Y[i] != want[i] {
			t.Fatalf("buckets %v, want %v", s.Y, want)
		}
	}
	if s.X[0] != -2*traceBucket.Seconds() || s.X[2] != 0 {
		t.Fatalf("x %v: want seconds from the kill", s.X)
	}
}

// TestRecoveryPlotEndsAFewSecondsAfterTheJobRanAgain: each restart is one
// series, cut recoveryTail after the job ran again (the trace goes on while
// the next case fills its state).
func TestRecoveryPlotEndsAFewSecondsAfterTheJobRanAgain(t *testing.T) {
	tr := &wireTrace{}
	t0 := time.Unix(100, 0)
	for i := range 80 { // 20 s of buckets
		tr.note(t0.Add(time.Duration(i) * traceBucket))
	}
	tr.mark(t0.Add(time.Second), t0.Add(3*time.Second))
	c := recoveryPlot([]recoveryCase{{Restart: restartOne, LocalRecovery: true, trace: tr}, {Restart: restartAll}})
	if len(c.Series) != 1 || c.Series[0].Name != "one node, local recovery on" {
		t.Fatalf("series %+v, want one for the case with a trace", c.Series)
	}
	xs := c.Series[0].X
	if last := xs[len(xs)-1]; last > 2+recoveryTail.Seconds() || last < 2+recoveryTail.Seconds()-traceBucket.Seconds() {
		t.Fatalf("last x %.2f s, want the plot to end %v after the job ran again (2 s after the kill)", last, recoveryTail)
	}
	if xs[0] != -1 {
		t.Fatalf("first x %.2f, want -1 (a second before the kill)", xs[0])
	}
}
