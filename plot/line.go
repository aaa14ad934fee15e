package plot

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Series is one line: points (X[i], Y[i]), X ascending.
type Series struct {
	Name string
	X, Y []float64
}

// Marker is a vertical line at X with a label (a kill, a rescale).
type Marker struct {
	X     float64
	Label string
}

// LineChart is a chart of lines over a numeric x axis.
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []Series
	Markers               []Marker
}

// WriteSVG draws the chart as an SVG document.
func (c LineChart) WriteSVG(w io.Writer) error {
	if len(c.Series) == 0 {
		return errors.New("line chart: no series")
	}
	xLo, xHi, yLo, yHi := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) || len(s.X) == 0 {
			return fmt.Errorf("line chart: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		if !finite(s.X...) || !finite(s.Y...) {
			return fmt.Errorf("line chart: series %q has a value that is not a finite number", s.Name)
		}
		for i := range s.X {
			xLo, xHi = math.Min(xLo, s.X[i]), math.Max(xHi, s.X[i])
			yLo, yHi = math.Min(yLo, s.Y[i]), math.Max(yHi, s.Y[i])
		}
	}
	for _, m := range c.Markers {
		if !finite(m.X) {
			return fmt.Errorf("line chart: marker %q is not at a finite x", m.Label)
		}
		xLo, xHi = math.Min(xLo, m.X), math.Max(xHi, m.X)
	}
	fr := newFrame(yLo, yHi)
	xt := niceTicks(xLo, xHi, 8)
	x0, x1 := xt[0], xt[len(xt)-1]
	x := func(v float64) float64 { return fr.left() + (v-x0)/(x1-x0)*(fr.right()-fr.left()) }
	var s svgWriter
	fr.begin(&s, c.Title, c.XLabel, c.YLabel)
	for _, v := range xt {
		px := num(x(v))
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111827"/>`+"\n", px, num(fr.bottom()), px, num(fr.bottom()+5))
		s.f(`<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", px, num(fr.bottom()+18), label(v))
	}
	for _, m := range c.Markers {
		px := num(x(m.X))
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#b91c1c" stroke-dasharray="4 3"/>`+"\n", px, num(fr.top()), px, num(fr.bottom()))
		s.f(`<text x="%s" y="%s" fill="#b91c1c" text-anchor="middle">%s</text>`+"\n", px, num(fr.top()-4), esc(m.Label))
	}
	var names []string
	for i, sr := range c.Series {
		pts := make([]string, len(sr.X))
		for k := range sr.X {
			pts[k] = num(x(sr.X[k])) + "," + num(fr.y(sr.Y[k]))
		}
		s.f(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour(i), strings.Join(pts, " "))
		names = append(names, sr.Name)
	}
	legend(&s, names)
	return end(&s, w)
}
