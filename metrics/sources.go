package metrics

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// sources are collectors read at scrape time, each under a name: setting a
// name again replaces its collector (a node's next run reports in place of
// the previous one, never beside it with the same labels).
type sources struct {
	mu     sync.Mutex
	byName map[string]prometheus.Collector
}

// Describe sends nothing: the sources are unchecked collectors, whose
// metrics may change with the jobs running.
func (s *sources) Describe(chan<- *prometheus.Desc) {}

// Collect collects every source, in the order of their names.
func (s *sources) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	cs := make([]prometheus.Collector, len(names))
	for i, n := range names {
		cs[i] = s.byName[n]
	}
	s.mu.Unlock()
	for _, c := range cs {
		c.Collect(ch)
	}
}

// SetSource makes c the collector read at scrape time under name, in
// place of the one set before under that name. Each source's metrics must
// differ from every other source's by name or labels.
func (r *Registry) SetSource(name string, c prometheus.Collector) {
	if r == nil {
		return
	}
	r.src.mu.Lock()
	defer r.src.mu.Unlock()
	if r.src.byName == nil {
		r.src.byName = map[string]prometheus.Collector{}
	}
	r.src.byName[name] = c
}
