package plot

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Chart size and margins, in SVG user units (pixels).
const (
	width        = 760
	height       = 440
	marginLeft   = 78
	marginRight  = 170 // room for the legend
	marginTop    = 40
	marginBottom = 58
	yTicks       = 6
)

// palette colours series in order.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"}

// colour is series i's colour.
func colour(i int) string { return palette[i%len(palette)] }

// svgWriter accumulates an SVG document in memory.
type svgWriter struct {
	b strings.Builder
}

func (s *svgWriter) f(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// esc escapes text for SVG.
func esc(s string) string { return html.EscapeString(s) }

// num formats a coordinate with at most two decimals.
func num(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// frame is a chart's plot area and its y scale.
type frame struct {
	yLo, yHi float64
	yTicks   []float64
}

// plot area bounds
func (frame) left() float64   { return marginLeft }
func (frame) right() float64  { return width - marginRight }
func (frame) top() float64    { return marginTop }
func (frame) bottom() float64 { return height - marginBottom }

// y maps a value to its vertical position.
func (fr frame) y(v float64) float64 {
	return fr.bottom() - (v-fr.yLo)/(fr.yHi-fr.yLo)*(fr.bottom()-fr.top())
}

// newFrame scales the y axis to cover [lo, hi] with round ticks.
func newFrame(lo, hi float64) frame {
	t := niceTicks(lo, hi, yTicks)
	return frame{yLo: t[0], yHi: t[len(t)-1], yTicks: t}
}

// begin writes the document head, title, y grid, y tick labels and axis
// labels.
func (fr frame) begin(s *svgWriter, title, xLabel, yLabel string) {
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	s.f(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	s.f(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", marginLeft, esc(title))
	for _, v := range fr.yTicks {
		y := num(fr.y(v))
		s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e7eb"/>`+"\n", num(fr.left()), y, num(fr.right()), y)
		s.f(`<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", num(fr.left()-6), y, label(v))
	}
	s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111827"/>`+"\n", num(fr.left()), num(fr.top()), num(fr.left()), num(fr.bottom()))
	s.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#111827"/>`+"\n", num(fr.left()), num(fr.bottom()), num(fr.right()), num(fr.bottom()))
	s.f(`<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", num((fr.left()+fr.right())/2), height-12, esc(xLabel))
	cy := num((fr.top() + fr.bottom()) / 2)
	s.f(`<text x="18" y="%s" text-anchor="middle" transform="rotate(-90 18 %s)">%s</text>`+"\n", cy, cy, esc(yLabel))
}

// legend writes one swatch and name per series, right of the plot area.
func legend(s *svgWriter, names []string) {
	x := width - marginRight + 16
	for i, n := range names {
		y := marginTop + 8 + i*20
		s.f(`<rect x="%d" y="%d" width="14" height="10" fill="%s"/>`+"\n", x, y-8, colour(i))
		s.f(`<text x="%d" y="%d">%s</text>`+"\n", x+20, y+1, esc(n))
	}
}

// end closes the document and writes it to w.
func end(s *svgWriter, w io.Writer) error {
	s.f("</svg>\n")
	_, err := io.WriteString(w, s.b.String())
	return err
}

// finite reports whether every value is a finite number.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
