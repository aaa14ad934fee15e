package weir

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/metrics"
)

// RuntimeOptions tune batching and flow control; zero fields take defaults.
type RuntimeOptions = actors.Options

// RunConfig is how Run runs a job.
type RunConfig struct {
	Runtime RuntimeOptions
	// Logger receives the job's and the actor system's logs.
	Logger zerolog.Logger
	// Progress, when > 0, logs progress at this interval.
	Progress time.Duration
	// Duration, when > 0, ends the sources after this long and drains the job
	// (for unbounded jobs), as Drain does.
	Duration time.Duration
	// Drain makes a cancelled ctx end the sources and drain the job, with a
	// final aligned checkpoint, instead of stopping it at once.
	Drain bool
	// Checkpoint configures checkpoints; the zero value takes none.
	Checkpoint CheckpointConfig
	// Restore resumes from a checkpoint in Checkpoint.StateDir: "latest" or an id.
	Restore string
	// OperatorParallelism runs the named operators at another parallelism
	// than the graph's (see WithOperatorParallelism).
	OperatorParallelism map[string]int
	// Supervision says how failed regions restart (with checkpoints); the zero
	// value takes DefaultSupervision.
	Supervision *SupervisionConfig
	// Rescale is a schedule of live rescales (WithRescaleSchedule).
	Rescale []RescaleStep
	// OwnsStore says this run is the only writer of the job's checkpoints in
	// its store, so checkpoints that never completed (no valid manifest) are
	// deleted before it starts. A local state directory is always owned by
	// its run; a cluster coordinator owns the job's bucket while it holds the
	// job's lease (fenced coordinators write nothing the nodes accept).
	OwnsStore bool
	// HeldByNodes, when set, reports the key groups of a checkpoint that a
	// live node of the cluster holds a copy of: choosing the checkpoint to
	// restore does not read them from the store to verify them (the
	// restore on that node verifies each section it reads, and reads the
	// store for one whose copy fails).
	HeldByNodes func(ckpt uint64, operator string, group int) bool
	// OnJob, when set, is called with the job once it is submitted (see
	// WithJobObserver).
	OnJob func(*actors.Job)
	// Metrics receives the job's metrics (nil: a registry of the run's own,
	// not served).
	Metrics *metrics.Registry
}

// RunOption configures Run.
type RunOption func(*RunConfig)

// WithRuntime sets batching and flow-control options.
func WithRuntime(o RuntimeOptions) RunOption { return func(c *RunConfig) { c.Runtime = o } }

// WithLogger sends logs to l.
func WithLogger(l zerolog.Logger) RunOption { return func(c *RunConfig) { c.Logger = l } }

// WithProgress logs progress every d.
func WithProgress(d time.Duration) RunOption { return func(c *RunConfig) { c.Progress = d } }

// WithDuration ends the sources after d and lets the job drain.
func WithDuration(d time.Duration) RunOption { return func(c *RunConfig) { c.Duration = d } }

// WithDrain makes a cancelled ctx end the sources and drain the job instead
// of stopping it at once.
func WithDrain() RunOption { return func(c *RunConfig) { c.Drain = true } }

// WithCheckpoints turns checkpoints on as configured.
func WithCheckpoints(c CheckpointConfig) RunOption { return func(r *RunConfig) { r.Checkpoint = c } }

// WithRestore resumes the job from checkpoint "latest" or an id.
func WithRestore(id string) RunOption { return func(r *RunConfig) { r.Restore = id } }

// WithMetrics reports the job's metrics into reg, e.g. one served at /metrics.
func WithMetrics(reg *metrics.Registry) RunOption { return func(r *RunConfig) { r.Metrics = reg } }

// WithSupervision sets restart intensity and chaos.
func WithSupervision(s SupervisionConfig) RunOption { return func(r *RunConfig) { r.Supervision = &s } }

// Result summarises a finished run.
type Result struct {
	Job        string
	RecordsIn  int64
	RecordsOut int64
	// Duration is the time from submitting the job until it finished (every
	// record processed and committed), not counting its actors' teardown.
	Duration time.Duration
	// LatencyP50 and LatencyP99 are set when the graph recorded latencies.
	LatencyP50, LatencyP99 time.Duration
	LatencyCount           int64
	// MaxChannelOccupancy is the most buffers any channel held (≤ capacity).
	MaxChannelOccupancy int64
	// MaxCheckpointsInFlight is the most checkpoints in flight at once (at
	// most CheckpointConfig.MaxConcurrent).
	MaxCheckpointsInFlight int64
	// Checkpoints lists the checkpoints completed during the run.
	Checkpoints []CheckpointStat
	// RestoredFrom is the checkpoint the run resumed from (0 for a fresh start).
	RestoredFrom uint64
	// Kills, Failures and Restarts count chaos kills, task failures and region
	// restarts; Recovery holds each restart's time from failure to the first
	// record processed after the restore.
	Kills, Failures, Restarts int
	Recovery                  []time.Duration
	// Restore sums where restored state came from; nil when nothing was
	// restored.
	Restore *RestoreStat
	// Rescales are the scheduled live rescales, in order.
	Rescales []RescaleStat
}

// RecordsPerSecond is input records per second of wall time.
func (r *Result) RecordsPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.RecordsIn) / r.Duration.Seconds()
}

// jobStopWait bounds how long Run waits for a finished job's actors to stop.
const jobStopWait = 30 * time.Second

// stoppedJobWait bounds that wait for a job stopped through ctx: an actor busy
// in a long operator call must not hold up the stop (the process is about to
// exit; a restore rolls back what such an actor still writes to staging).
const stoppedJobWait = 300 * time.Millisecond

// Run runs the graph in this process until its sources end, or the configured
// duration passes (which ends the sources and drains the job), or ctx ends.
// When ctx ends the job stops without draining: with checkpoints, its sources
// stop and a stop checkpoint captures what is in flight, so a run with
// WithRestore("latest") continues exactly once. Whatever the backlog, the job
// ends within a second (at the last completed checkpoint if the stop
// checkpoint was not committed by then) and Run returns at most 0.6 s later. An operator call that is still
// running then (a stage slow per batch) ends on its own after Run has
// returned; what it writes is staged output that a restore rolls back.
// WithDrain drains instead.
//
// Without options Run takes no checkpoints and discards its logs; see
// DefaultRunConfig for how that differs from `node run`.
func Run(ctx context.Context, g *Graph, opts ...RunOption) (*Result, error) {
	cfg := DefaultRunConfig()
	for _, o := range opts {
		o(&cfg)
	}
	p, err := g.plan()
	if err != nil {
		return nil, err
	}
	st, closeStore, err := openStateDir(cfg)
	if err != nil {
		return nil, err
	}
	defer closeStore()
	rt, err := runtimeFor(ctx, p, cfg, st)
	if err != nil {
		return nil, err
	}
	co := rt.Checkpoint
	if co.Restore != nil {
		cfg.Logger.Info().Str("job", p.Name).Uint64("checkpoint", co.Restore.CheckpointID).Msg("restoring from checkpoint")
	}
	node := actors.NewNodeWithMetrics(cfg.Logger, cfg.Metrics)
	slowStop := false // a stopped job's actors did not all stop in time
	defer func() {
		if !slowStop {
			node.Shutdown()
		} else if !node.ShutdownWithin(stoppedJobWait) {
			cfg.Logger.Warn().Str("job", p.Name).Msg("returning while an operator call still runs")
		}
	}()
	start := time.Now()
	job, err := node.Submit(p, rt)
	if err != nil {
		return nil, err
	}
	if cfg.OnJob != nil {
		cfg.OnJob(job)
	}
	var deadline <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(cfg.Duration)
		defer t.Stop()
		deadline = t.C
	}
	var progress <-chan time.Time
	if cfg.Progress > 0 {
		t := time.NewTicker(cfg.Progress)
		defer t.Stop()
		progress = t.C
	}
	var rescales *rescaler
	if len(cfg.Rescale) > 0 {
		rescales = startRescaler(cfg.Rescale, job, start, cfg.Logger)
	}
	cancelled, stopped := ctx.Done(), false
	lastIn, lastAt := int64(0), start
wait:
	for {
		select {
		case <-job.Done():
			break wait
		case <-deadline:
			job.Drain(fmt.Sprintf("duration %v elapsed", cfg.Duration))
			deadline = nil
		case <-cancelled:
			cancelled = nil // a closed channel is always ready: wait for the rest
			if cfg.Drain {
				job.Drain("interrupted")
			} else {
				stopped = true
				job.Stop("interrupted")
			}
		case now := <-progress:
			in := job.Metrics.RecordsIn.Load()
			rate := float64(in-lastIn) / now.Sub(lastAt).Seconds()
			cfg.Logger.Info().Str("job", p.Name).Int64("records_in", in).
				Int64("records_out", job.Metrics.RecordsOut.Load()).
				Float64("records_per_s", rate).Dur("elapsed", now.Sub(start)).Msg("progress")
			lastIn, lastAt = in, now
		}
	}
	// The job's time ends when it has finished (every record processed and
	// committed); tearing down its actors is not part of it.
	took := time.Since(start)
	// Return only once nothing of the job runs: a sink must not commit or
	// write after Run has returned (a restore may follow at once).
	wait := jobStopWait
	if stopped {
		wait = stoppedJobWait
	}
	select {
	case <-job.Gone():
	case <-time.After(wait):
		cfg.Logger.Warn().Str("job", p.Name).Dur("waited", wait).Msg("job's actors still stopping")
		slowStop = stopped
	}
	res := &Result{
		Rescales:               rescales.wait(),
		Job:                    p.Name,
		RecordsIn:              job.Metrics.RecordsIn.Load(),
		RecordsOut:             job.Metrics.RecordsOut.Load(),
		Duration:               took,
		MaxChannelOccupancy:    job.Metrics.MaxChannelOccupancy.Load(),
		MaxCheckpointsInFlight: job.Metrics.MaxCheckpointsInFlight.Load(),
	}
	if co.Restore != nil {
		res.RestoredFrom = co.Restore.CheckpointID
	}
	sv := job.Supervision()
	res.Kills, res.Failures, res.Restarts, res.Recovery = sv.Kills, sv.Failures, sv.Restarts, sv.Recovery
	res.Restore = NewRestoreStat(job.Restores())
	for _, c := range job.Checkpoints() {
		res.Checkpoints = append(res.Checkpoints, CheckpointStat{ID: c.ID, Mode: c.Mode, Duration: c.Duration,
			DurationMs: ms(c.Duration), AlignmentMs: ms(c.Alignment), StateBytes: c.StateBytes, StateWrittenBytes: c.StateWrittenBytes,
			InflightBytes: c.InflightBytes, InflightRefBytes: c.InflightRefBytes, InflightBuffers: c.InflightBuffers, Final: c.Final})
	}
	if n := g.Latency.Count(); n > 0 {
		res.LatencyCount = n
		res.LatencyP50 = g.Latency.Quantile(0.5)
		res.LatencyP99 = g.Latency.Quantile(0.99)
	}
	return res, job.Err()
}

// ms is d in fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
