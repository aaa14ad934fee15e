package plot

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// BarSeries is one bar per category; Upper, when set, draws a whisker up
// to Upper[i] (e.g. a p95 over a p50 bar).
type BarSeries struct {
	Name   string
	Values []float64
	Upper  []float64
}

// BarChart is a grouped bar chart: per category, one bar per series.
type BarChart struct {
	Title, XLabel, YLabel string
	Categories            []string
	Series                []BarSeries
}

// WriteSVG draws the chart as an SVG document.
func (c BarChart) WriteSVG(w io.Writer) error {
	if len(c.Categories) == 0 || len(c.Series) == 0 {
		return errors.New("bar chart: no categories or no series")
	}
	hi := 0.0
	for _, sr := range c.Series {
		if len(sr.Values) != len(c.Categories) || (sr.Upper != nil && len(sr.Upper) != len(c.Categories)) {
			return fmt.Errorf("bar chart: series %q has %d values (%d upper) for %d categories", sr.Name, len(sr.Values), len(sr.Upper), len(c.Categories))
		}
		if !finite(sr.Values...) || !finite(sr.Upper...) {
			return fmt.Errorf("bar chart: series %q has a value that is not a finite number", sr.Name)
		}
		for i, v := range sr.Values {
			if v < 0 {
				return fmt.Errorf("bar chart: series %q: negative value %v", sr.Name, v)
			}
			hi = math.Max(hi, v)
			if sr.Upper != nil {
				hi = math.Max(hi, sr.Upper[i])
			}
		}
	}
	fr := newFrame(0, hi)
	var s svgWriter
	fr.begin(&s, c.Title, c.XLabel, c.YLabel)
	groupW := (fr.right() - fr.left()) / float64(len(c.Categories))
	barW := groupW * 0.8 / float64(len(c.Series))
	for ci, cat := range c.Categories {
		gx := fr.left() + float64(ci)*groupW
		s.f(`<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(gx+groupW/2), num(fr.bottom()+18), esc(cat))
		for si, sr := range c.Series {
			bx := gx + groupW*0.1 + float64(si)*barW
			v := sr.Values[ci]
			y := fr.y(v)
			s.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(bx), num(y), num(barW*0.92), num(fr.bottom()-y), colour(si))
			top := y
			if sr.Upper != nil {
				top = fr.y(sr.Upper[ci])
				cx := num(bx + barW*0.46)
				s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111827"/>`+"\n", cx, num(y), cx, num(top))
				s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111827"/>`+"\n", num(bx+barW*0.26), num(top), num(bx+barW*0.66), num(top))
			}
			s.f(`<text x="%s" y="%s" text-anchor="middle" font-size="10">%s</text>`+"\n", num(bx+barW*0.46), num(top-4), valueLabel(v))
		}
	}
	var names []string
	for _, sr := range c.Series {
		names = append(names, sr.Name)
	}
	legend(&s, names)
	return end(&s, w)
}

// valueLabel is a bar's value written above it.
func valueLabel(v float64) string {
	if v >= 100 {
		return label(math.Round(v))
	}
	return num(v)
}
