package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/weirstream/weir/plot"
	"github.com/weirstream/weir/samples/backpressure"
)

// writeSVG writes a chart to path.
func writeSVG(path string, c interface{ WriteSVG(w io.Writer) error }) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := c.WriteSVG(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return f.Close()
}

// backpressurePlot is the FLIP-76 figure: checkpoint duration per sleep and
// mode (p50 bars, p95 whiskers); mode none has no checkpoints and is left out.
func backpressurePlot(rows []backpressure.BenchRow) plot.BarChart {
	c := plot.BarChart{Title: "Checkpoint duration under backpressure (p50, whisker p95)",
		XLabel: "average sleep per record in the sleepy map (ms)", YLabel: "checkpoint duration (ms)"}
	cat := map[float64]int{}
	ser := map[string]int{}
	for _, r := range rows {
		if r.Mode == "none" {
			continue
		}
		if _, ok := cat[r.SleepMs]; !ok {
			cat[r.SleepMs] = len(c.Categories)
			c.Categories = append(c.Categories, strconv.FormatFloat(r.SleepMs, 'f', -1, 64))
		}
		if _, ok := ser[r.Mode]; !ok {
			ser[r.Mode] = len(c.Series)
			c.Series = append(c.Series, plot.BarSeries{Name: r.Mode})
		}
	}
	for i := range c.Series {
		c.Series[i].Values = make([]float64, len(c.Categories))
		c.Series[i].Upper = make([]float64, len(c.Categories))
	}
	for _, r := range rows {
		if r.Mode == "none" {
			continue
		}
		s := &c.Series[ser[r.Mode]]
		s.Values[cat[r.SleepMs]], s.Upper[cat[r.SleepMs]] = r.CheckpointMsP50, r.CheckpointMsP95
	}
	return c
}

// wireTrace counts a kill trial's data messages in time buckets, to plot
// throughput around the kill. Safe for the subscription's goroutine.
type wireTrace struct {
	mu      sync.Mutex
	start   time.Time
	counts  []int
	killed  time.Time
	running time.Time
}

// traceBucket is the width of one throughput bucket.
const traceBucket = 250 * time.Millisecond

// note counts one message at now.
func (t *wireTrace) note(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() {
		t.start = now
	}
	i := int(now.Sub(t.start) / traceBucket)
	for len(t.counts) <= i {
		t.counts = append(t.counts, 0)
	}
	t.counts[i]++
}

// mark records the kill and the time the job ran again.
func (t *wireTrace) mark(killed, running time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.killed, t.running = killed, running
}

// series is messages/s per bucket, x in seconds from the kill.
func (t *wireTrace) series(name string) plot.Series {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := plot.Series{Name: name}
	for i, n := range t.counts {
		at := t.start.Add(time.Duration(i) * traceBucket)
		s.X = append(s.X, at.Sub(t.killed).Seconds())
		s.Y = append(s.Y, float64(n)/traceBucket.Seconds())
	}
	return s
}

// killPlot draws the data messages per second of each kill trial around
// its SIGKILL (x = 0).
func killPlot(traces []*wireTrace, names []string) plot.LineChart {
	c := plot.LineChart{Title: "keycount on the wire around a SIGKILL", XLabel: "seconds from the SIGKILL",
		YLabel: "data messages/s (buffers of records)", Markers: []plot.Marker{{X: 0, Label: "SIGKILL"}}}
	for i, t := range traces {
		if s := t.series(names[i]); len(s.X) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	return c
}

// begun is when the trace saw its first message (now, if none yet).
func (t *wireTrace) begun() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() {
		return time.Now()
	}
	return t.start
}

// recoveryTail is how much of a restart's trace the plot shows after the
// job ran again.
const recoveryTail = 3 * time.Second

// recoveryPlot draws the data messages per second of each restart of the
// recovery benchmark around its SIGKILL (x = 0), up to a few seconds after
// the job ran again.
func recoveryPlot(cases []recoveryCase) plot.LineChart {
	c := plot.LineChart{Title: "bigstate on the wire around a SIGKILL and restart", XLabel: "seconds from the SIGKILL",
		YLabel: "data messages/s (buffers of records)", Markers: []plot.Marker{{X: 0, Label: "SIGKILL"}}}
	for _, rc := range cases {
		if rc.trace == nil {
			continue
		}
		name := rc.Restart + ", local recovery "
		if rc.LocalRecovery {
			name += "on"
		} else {
			name += "off"
		}
		s := rc.trace.series(name)
		end := rc.trace.ranAgain() + recoveryTail.Seconds()
		n := 0
		for n < len(s.X) && s.X[n] <= end {
			n++
		}
		s.X, s.Y = s.X[:n], s.Y[:n]
		if len(s.X) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	return c
}

// ranAgain is the time from the kill to the job running again, in seconds.
func (t *wireTrace) ranAgain() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running.Sub(t.killed).Seconds()
}
