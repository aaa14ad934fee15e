package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every weir metric.
const Namespace = "weir"

// Restart causes, the values of the cause label of weir_restarts_total.
const (
	CauseTaskFailed = "task_failed" // an operator call, a channel or a task actor failed
	CauseNodeLost   = "node_lost"   // the task's node stopped heartbeating
	CauseLinkFailed = "link_failed" // a message was lost on the wire (bad sequence, slow consumer)
	CauseChaos      = "chaos"       // a chaos kill (node chaos, --chaos-kill-every)
	// CauseCoordinatorLost is a whole job restored from its latest
	// checkpoint by the node that took its coordination over.
	CauseCoordinatorLost = "coordinator_lost"
)

// Registry holds one node process's metrics.
type Registry struct {
	reg *prometheus.Registry
	src sources

	checkpointSeconds      *prometheus.HistogramVec
	alignmentSeconds       *prometheus.HistogramVec
	checkpointState        *prometheus.GaugeVec
	checkpointStateWritten *prometheus.GaugeVec
	checkpointInflight     *prometheus.GaugeVec
	checkpointsTotal       *prometheus.CounterVec
	restarts               *prometheus.CounterVec
	restoreSeconds         *prometheus.HistogramVec
	recoverySeconds        *prometheus.HistogramVec
	rescaleSeconds         *prometheus.HistogramVec
	rescaleGroupsMoved     *prometheus.CounterVec
	rescaleGroupsLatest    *prometheus.GaugeVec
}

// durationBuckets cover 1 ms … about 65 s in powers of two: checkpoint,
// alignment, restore, recovery and rescale times.
var durationBuckets = prometheus.ExponentialBuckets(0.001, 2, 17)

// New makes a registry with the Go runtime and process collectors and
// weir's event metrics.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry()}
	job := []string{"job"}
	hist := func(name, help string, labels []string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help,
			Buckets: durationBuckets}, labels)
	}
	r.checkpointSeconds = hist("checkpoint_duration_seconds", "Time from triggering a checkpoint to its completion (manifest written).", []string{"job", "mode"})
	r.alignmentSeconds = hist("checkpoint_alignment_seconds", "Longest barrier alignment of any task in a completed checkpoint.", job)
	r.restoreSeconds = hist("restore_seconds", "Time a task took to restore its state (reading and loading).", job)
	r.recoverySeconds = hist("recovery_seconds", "Time from detecting a failure to the first record processed after the restore.", job)
	r.rescaleSeconds = hist("rescale_seconds", "Time a rescale of an operator took, from its start until the new instances run.", []string{"job", "operator"})
	r.checkpointState = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "checkpoint_state_bytes",
		Help: "Full size of the operator state of the latest completed checkpoint (with incremental checkpoints: every whole section and delta it restores from, whichever checkpoint wrote it)."}, job)
	r.checkpointStateWritten = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "checkpoint_state_written_bytes",
		Help: "Operator state bytes the latest completed checkpoint wrote (with incremental checkpoints: its deltas and whole sections only)."}, job)
	r.checkpointInflight = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "checkpoint_inflight_bytes",
		Help: "In-flight (channel state) bytes captured by the latest completed checkpoint."}, job)
	r.checkpointsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "checkpoints_completed_total",
		Help: "Checkpoints completed."}, []string{"job", "mode"})
	r.restarts = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "restarts_total",
		Help: "Restarts of a job's regions from a checkpoint, by the cause of the failure."}, []string{"job", "cause"})
	r.rescaleGroupsMoved = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "rescale_key_groups_moved_total",
		Help: "Key groups that changed owner in rescales."}, []string{"job", "operator"})
	r.rescaleGroupsLatest = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "rescale_key_groups_moved",
		Help: "Key groups that changed owner in the latest rescale of an operator."}, []string{"job", "operator"})
	r.reg.MustRegister(&r.src, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.checkpointSeconds, r.alignmentSeconds, r.restoreSeconds, r.recoverySeconds, r.rescaleSeconds,
		r.checkpointState, r.checkpointStateWritten, r.checkpointInflight, r.checkpointsTotal, r.restarts, r.rescaleGroupsMoved, r.rescaleGroupsLatest)
	return r
}

// Gatherer is what /metrics serves (for tests and other exporters).
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ObserveCheckpoint records a completed checkpoint of job: its mode, its
// duration and alignment, the full size of its state, the state bytes it
// wrote and the in-flight bytes it stored.
func (r *Registry) ObserveCheckpoint(job, mode string, took, alignment time.Duration, stateBytes, stateWrittenBytes, inflightBytes int64) {
	if r == nil {
		return
	}
	r.checkpointSeconds.WithLabelValues(job, mode).Observe(took.Seconds())
	r.alignmentSeconds.WithLabelValues(job).Observe(alignment.Seconds())
	r.checkpointState.WithLabelValues(job).Set(float64(stateBytes))
	r.checkpointStateWritten.WithLabelValues(job).Set(float64(stateWrittenBytes))
	r.checkpointInflight.WithLabelValues(job).Set(float64(inflightBytes))
	r.checkpointsTotal.WithLabelValues(job, mode).Inc()
}

// CountRestart counts one restart of job (a region, or the whole job after a
// coordinator takeover) with its cause (one of the Cause constants).
func (r *Registry) CountRestart(job, cause string) {
	if r == nil {
		return
	}
	r.restarts.WithLabelValues(job, cause).Inc()
}

// ObserveRestore records one task restore of job and how long it took.
func (r *Registry) ObserveRestore(job string, took time.Duration) {
	if r == nil {
		return
	}
	r.restoreSeconds.WithLabelValues(job).Observe(took.Seconds())
}

// ObserveRecovery records one region's recovery time (failure to first
// record processed after the restore).
func (r *Registry) ObserveRecovery(job string, took time.Duration) {
	if r == nil {
		return
	}
	r.recoverySeconds.WithLabelValues(job).Observe(took.Seconds())
}
