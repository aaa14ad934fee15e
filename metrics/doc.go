// Package metrics is a node process's Prometheus registry: the events weir
// observes when they happen (checkpoints, restarts, restores, recoveries,
// rescales) and the collectors that read the runtime's own atomic counters
// at scrape time, served in the standard text exposition at /metrics.
//
// Each node process makes its own Registry (never Prometheus's global
// default), so tests can run many nodes in one process. Every method of a
// nil *Registry does nothing, so code paths without metrics need no checks.
//
// Per-record figures (records in and out, busy and backpressured time) are
// never touched per record here: the runtime keeps them in atomic counters
// and a collector reads them when /metrics is scraped.
package metrics
