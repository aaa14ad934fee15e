package plot

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata")

// checkGolden compares an SVG with testdata/name, checks it is well-formed
// XML, and rewrites the file with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(got))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", name, err)
		}
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from its golden file (go test ./plot -update rewrites it after a deliberate change):\n%s", name, got)
	}
}

func TestBarChartGolden(t *testing.T) {
	c := BarChart{Title: "Checkpoint duration under backpressure", XLabel: "sleep per record (ms)", YLabel: "checkpoint duration p50 (ms)",
		Categories: []string{"0", "0.01", "0.1"},
		Series: []BarSeries{
			{Name: "aligned", Values: []float64{42, 310, 2900}, Upper: []float64{60, 420, 3500}},
			{Name: "unaligned", Values: []float64{21, 25, 19.5}, Upper: []float64{30, 33, 27}},
		}}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bar.svg", b.Bytes())
	for _, want := range []string{"aligned", "unaligned", ">0.01<", ">2900<", ">19.5<"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("bar chart lacks %q", want)
		}
	}
}

func TestLineChartGolden(t *testing.T) {
	c := LineChart{Title: "Throughput around a SIGKILL", XLabel: "seconds from the kill", YLabel: "data messages/s",
		Series: []Series{
			{Name: "worker kill", X: []float64{-2, -1, 0, 1, 2, 3, 4, 5}, Y: []float64{900, 950, 920, 0, 0, 300, 880, 910}},
			{Name: "coordinator kill", X: []float64{-2, -1, 0, 1, 2, 3, 4, 5}, Y: []float64{880, 940, 900, 0, 0, 0, 500, 930}},
		},
		Markers: []Marker{{X: 0, Label: "SIGKILL"}}}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "line.svg", b.Bytes())
}

func TestChartsRejectBadInput(t *testing.T) {
	nan := 0.0
	nan /= nan
	cases := map[string]interface{ WriteSVG(io.Writer) error }{
		"no series":           LineChart{},
		"uneven series":       LineChart{Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}},
		"NaN":                 LineChart{Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{nan}}}},
		"no categories":       BarChart{Series: []BarSeries{{Name: "a"}}},
		"values ≠ categories": BarChart{Categories: []string{"x", "y"}, Series: []BarSeries{{Name: "a", Values: []float64{1}}}},
		"negative bar":        BarChart{Categories: []string{"x"}, Series: []BarSeries{{Name: "a", Values: []float64{-1}}}},
	}
	for name, c := range cases {
		if err := c.WriteSVG(io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
