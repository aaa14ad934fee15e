// Package scrape reads a /metrics page with the Prometheus text parser, for
// tests that check weir's metrics against a running node.
package scrape

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are the metric families of one scrape, by name.
type Families map[string]*dto.MetricFamily

// Get scrapes url (a /metrics page) and parses it as the Prometheus text
// format.
func Get(url string) (Families, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return Families(fams), nil
}

// matches reports whether m has every label of want with its value.
func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// value is a counter's, gauge's or untyped metric's value, or a histogram's
// or summary's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	}
	return m.GetUntyped().GetValue()
}

// Sum adds the values of the metrics of family name whose labels include
// labels (a histogram counts its observations); found is false when no
// metric matched.
func (f Families) Sum(name string, labels map[string]string) (sum float64, found bool) {
	fam, ok := f[name]
	if !ok {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		if matches(m, labels) {
			sum += value(m)
			found = true
		}
	}
	return sum, found
}

// LabelValues lists the values label takes in family name.
func (f Families) LabelValues(name, label string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range f[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && !seen[l.GetValue()] {
				seen[l.GetValue()] = true
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

// Type is the type of family name, or "" when it is missing.
func (f Families) Type(name string) string {
	fam, ok := f[name]
	if !ok {
		return ""
	}
	return fam.GetType().String()
}

// LoggedAddr finds the address a node's --http listener logged (its
// "serving HTTP" line) in JSON log lines, or "".
func LoggedAddr(log string) string {
	for _, line := range strings.Split(log, "\n") {
		var ev struct{ Message, Addr string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Message == "serving HTTP" {
			return ev.Addr
		}
	}
	return ""
}
