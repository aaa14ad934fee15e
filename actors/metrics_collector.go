package actors

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirstream/weir/metrics"
)

// Descriptions of the figures the collector reads at scrape time.
var (
	taskLabels      = []string{"job", "operator", "instance"}
	descRecordsIn   = taskDesc("records_in_total", "Records a task read (a source) or handed to its operator.")
	descRecordsOut  = taskDesc("records_out_total", "Records a task sealed into output buffers, or wrote (a sink).")
	descBusy        = taskDesc("busy_seconds_total", "Time a task spent in operator calls and source reads.")
	descBackpressed = taskDesc("backpressured_seconds_total", "Time a task had an output channel without credit (backpressure).")
	descIdle        = taskDesc("idle_seconds_total", "Time a task was neither busy nor backpressured.")
	descQueued      = prometheus.NewDesc("weir_channel_buffers_queued", "Buffers a channel holds: received and not yet processed by its consumer.",
		[]string{"job", "channel"}, nil)
	descCredits = prometheus.NewDesc("weir_channel_credits", "Credits the producer of a channel has left (0: backpressured).",
		[]string{"job", "channel"}, nil)
	descJobIn = prometheus.NewDesc("weir_job_records_in_total", "Records the job's sources read on this node.",
		[]string{"job"}, nil)
	descJobOut = prometheus.NewDesc("weir_job_records_out_total", "Records the job's sinks wrote on this node.",
		[]string{"job"}, nil)
	descFailures = prometheus.NewDesc("weir_job_failures_total", "Task failures of the job seen by its coordinator on this node.",
		[]string{"job"}, nil)
	descRestoreBytes = prometheus.NewDesc("weir_restore_bytes_total", "State bytes tasks restored on this node, by where they came from (local copy or checkpoint store).",
		[]string{"job", "source"}, nil)
	descNodeTasks = prometheus.NewDesc("weir_node_tasks", "Task instances running on this node.", nil, nil)
)

func taskDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("weir_task_"+name, help, taskLabels, nil)
}

// jobsSeen are the jobs a node ran, the latest per name, for the collector:
// a finished job's figures stay until a job of the same name replaces it.
type jobsSeen struct {
	mu     sync.Mutex
	byName map[string]*Job
}

func (s *jobsSeen) add(j *Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byName == nil {
		s.byName = map[string]*Job{}
	}
	s.byName[j.Plan.Name] = j
}

func (s *jobsSeen) list() []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Job, 0, len(s.byName))
	for _, j := range s.byName {
		out = append(out, j)
	}
	return out
}

// nodeCollector exports a node's live counters at scrape time.
type nodeCollector struct{ n *Node }

// Describe sends the descriptions of every figure.
func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRecordsIn, descRecordsOut, descBusy, descBackpressed, descIdle,
		descQueued, descCredits, descJobIn, descJobOut, descFailures, descRestoreBytes, descNodeTasks} {
		ch <- d
	}
}

// Collect reads the counters of every job the node ran.
func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	ch <- prometheus.MustNewConstMetric(descNodeTasks, prometheus.GaugeValue, float64(c.n.Tasks()))
	for _, j := range c.n.seen.list() {
		name := j.Plan.Name
		ch <- prometheus.MustNewConstMetric(descJobIn, prometheus.CounterValue, float64(j.Metrics.RecordsIn.Load()), name)
		ch <- prometheus.MustNewConstMetric(descJobOut, prometheus.CounterValue, float64(j.Metrics.RecordsOut.Load()), name)
		ch <- prometheus.MustNewConstMetric(descFailures, prometheus.CounterValue, float64(j.Supervision().Failures), name)
		rs := j.Restores()
		ch <- prometheus.MustNewConstMetric(descRestoreBytes, prometheus.CounterValue, float64(rs.Read.LocalBytes), name, "local")
		ch <- prometheus.MustNewConstMetric(descRestoreBytes, prometheus.CounterValue, float64(rs.Read.RemoteBytes), name, "remote")
		tasks, chans := j.live.snapshot()
		for _, t := range tasks {
			inst := strconv.Itoa(t.instance)
			busy, bp, idle := t.times(now)
			ch <- prometheus.MustNewConstMetric(descRecordsIn, prometheus.CounterValue, float64(t.recordsIn.Load()), name, t.operator, inst)
			ch <- prometheus.MustNewConstMetric(descRecordsOut, prometheus.CounterValue, float64(t.recordsOut.Load()), name, t.operator, inst)
			ch <- prometheus.MustNewConstMetric(descBusy, prometheus.CounterValue, busy.Seconds(), name, t.operator, inst)
			ch <- prometheus.MustNewConstMetric(descBackpressed, prometheus.CounterValue, bp.Seconds(), name, t.operator, inst)
			ch <- prometheus.MustNewConstMetric(descIdle, prometheus.CounterValue, idle.Seconds(), name, t.operator, inst)
		}
		for _, g := range chans {
			if g.hasQueued.Load() {
				ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(g.queued.Load()), name, g.name)
			}
			if g.hasCredits.Load() {
				ch <- prometheus.MustNewConstMetric(descCredits, prometheus.GaugeValue, float64(g.credits.Load()), name, g.name)
			}
		}
	}
}

// Metrics is the node's registry (never nil).
func (n *Node) Metrics() *metrics.Registry { return n.metrics }
