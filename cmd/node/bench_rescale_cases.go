package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/rescale/flow"
)

// The two cases of `node bench rescale`: the same paced job, its count
// rescaled From → To → From live, and stopped with a checkpoint and
// restored at the new parallelism.

// Names of the cases.
const (
	caseLive    = "live"
	caseRestore = "stop-and-restore"
)

// rescaleStepResult is one rescale of a case.
type rescaleStepResult struct {
	From int `json:"from"`
	To   int `json:"to"`
	// RequestS is when it was asked for, in seconds since the case's start.
	RequestS float64 `json:"request_s"`
	// TookMs is from the request to the live rescale's commit, or to the
	// first record the restored job delivered.
	TookMs float64 `json:"took_ms"`
	// StopMs (stop-and-restore) is from the request until the stopped job
	// had ended.
	StopMs float64 `json:"stop_ms,omitempty"`
	// Moved key groups against the fewest a balanced table could move.
	Moved   int `json:"moved"`
	Minimum int `json:"min_moves"`
	// WaitedMs, Bytes and LongestPauseMs (live) are the rescale's own
	// figures: the part of TookMs spent waiting for a running checkpoint to
	// finish, the state handed off and the longest any moved group waited
	// for its state.
	WaitedMs       float64 `json:"waited_ms,omitempty"`
	Bytes          int64   `json:"bytes,omitempty"`
	LongestPauseMs float64 `json:"longest_pause_ms,omitempty"`
	// ZeroBuckets counts the 100 ms buckets from the rescale's start (the
	// request, or for a live rescale the end of a running checkpoint it
	// waited for: WaitedMs later) to its end (TookMs after the request) in
	// which no record reached a sink; LowestRecordsPerS is the lowest
	// throughput among them.
	ZeroBuckets       int     `json:"zero_buckets"`
	LowestRecordsPerS float64 `json:"lowest_records_per_s"`
	// DisruptionMs is the time, in 1 ms steps, the throughput over the
	// sliding window (--window) was below half the steady throughput, from
	// the rescale's start until it is back at half or more after its end
	// (see fineCurve.disruption); DisruptionFromRequestMs the same from the
	// request, counting the checkpoint a live rescale waited for. NoiseMs
	// and NoiseWorstMs are the same measure over undisturbed time of the
	// same run: the mean and the worst of rescales as long as this one
	// placed one after the other in the steady window (fineCurve.noise).
	DisruptionMs            float64 `json:"disruption_ms"`
	DisruptionFromRequestMs float64 `json:"disruption_from_request_ms"`
	NoiseMs                 float64 `json:"noise_ms"`
	NoiseWorstMs            float64 `json:"noise_worst_ms"`
	// CPUWaitMs is how long the process's threads (summed) were runnable
	// but waited for a CPU over the time the disruption measure examined
	// (from the start until the throughput was back, at least until the
	// end); absent where the kernel does not tell it (bench_rescale_cpuwait.go).
	CPUWaitMs *float64 `json:"cpu_wait_ms,omitempty"`
	// Before is the latency of records due in the --steady window before
	// the request (from the warmup's end, or duringTail after the rescale
	// before, if later); During of those due from the rescale's start to
	// 0.5 s after its end; both split by whether this rescale moves their
	// key group.
	Before keyLatency `json:"latency_before"`
	During keyLatency `json:"latency_during"`
	// Runtime (live) is the rescale's flow figures as the runtime measured
	// them at count, with its latency from the source.
	Runtime *flow.Flow `json:"runtime_flow,omitempty"`

	moment rescaleMoment
}

// rescaleCaseResult is one case.
type rescaleCaseResult struct {
	Case                    string              `json:"case"`
	SteadyPerS              float64             `json:"steady_records_per_s"`
	Steps                   []rescaleStepResult `json:"rescales"`
	DisruptionMs            float64             `json:"disruption_ms"`
	DisruptionFromRequestMs float64             `json:"disruption_from_request_ms"`
	NoiseMs                 float64             `json:"noise_ms"`
	// RecordsPerS is the throughput at the sinks in 100 ms buckets from the
	// case's start to its end.
	RecordsPerS []float64 `json:"records_per_s"`
	// CPUWaitMsPerS is the process's threads' wait for a CPU per second of
	// the --steady window (absent where the kernel does not tell it).
	CPUWaitMsPerS *float64 `json:"cpu_wait_ms_per_s,omitempty"`
	// Failures counts the tasks that failed (each restarts its region from
	// a checkpoint, which disturbs the figures): 0 in a clean run.
	Failures int `json:"failures"`
}

// rescaleBenchResult is what `node bench rescale` prints.
type rescaleBenchResult struct {
	Keys       int                 `json:"keys"`
	StateBytes int                 `json:"state_bytes"`
	Rate       float64             `json:"rate"`
	Cases      []rescaleCaseResult `json:"cases"`
	Targets    []rescaleTarget     `json:"targets"`
	BucketMs   float64             `json:"bucket_ms"`
	WindowMs   float64             `json:"window_ms"`
}

// benchRescale runs the live case, then the stop-and-restore case.
func benchRescale(ctx context.Context, cfg rescaleBenchConfig, progress io.Writer) (*rescaleBenchResult, error) {
	plans, err := rescalePlans(cfg)
	if err != nil {
		return nil, err
	}
	res := &rescaleBenchResult{Keys: cfg.Keys, StateBytes: cfg.StateBytes, Rate: cfg.Rate, BucketMs: ms(rescaleBucket), WindowMs: ms(cfg.Window)}
	for _, run := range []func(context.Context, rescaleBenchConfig, []plannedRescale, io.Writer) (*rescaleCaseResult, error){runLiveCase, runRestoreCase} {
		c, err := run(ctx, cfg, plans, progress)
		if err != nil {
			return nil, err
		}
		res.Cases = append(res.Cases, *c)
	}
	res.Targets = rescaleTargets(res.Cases[0], res.Cases[1])
	return res, nil
}

// plannedRescale is one of the two rescales: count's parallelism before
// and after, and the key groups that move (as both the live planner and a
// restore at a new parallelism compute them: keygroups' Rescale of the
// current table).
type plannedRescale struct {
	From, To int
	Moved    map[int]bool
	Minimum  int
}

// rescalePlans computes From → To and To → From from the job's first table.
func rescalePlans(cfg rescaleBenchConfig) ([]plannedRescale, error) {
	t, err := keygroups.Contiguous(weir.DefaultMaxParallelism, cfg.From)
	if err != nil {
		return nil, err
	}
	var out []plannedRescale
	for _, to := range []int{cfg.To, cfg.From} {
		nt, moves, err := t.Rescale(to)
		if err != nil {
			return nil, err
		}
		minimum, err := keygroups.MinMoves(t, to)
		if err != nil {
			return nil, err
		}
		p := plannedRescale{From: len(t.Counts()), To: to, Moved: map[int]bool{}, Minimum: minimum}
		for _, m := range moves {
			p.Moved[m.Group] = true
		}
		out = append(out, p)
		t = nt
	}
	return out, nil
}

// runOutcome is what a weir.Run returned.
type runOutcome struct {
	res *weir.Result
	err error
}

// benchRun is one weir.Run of a case, in its own goroutine.
type benchRun struct {
	cancel context.CancelFunc
	done   chan runOutcome
	jobs   chan *actors.Job
}

// startBenchRun starts a run of the case's job; opts add to the
// checkpoints both cases take.
func startBenchRun(ctx context.Context, cfg rescaleBenchConfig, pace *pacer, log *latencyLog, run int, stateDir string, opts ...weir.RunOption) *benchRun {
	rctx, cancel := context.WithCancel(ctx)
	r := &benchRun{cancel: cancel, done: make(chan runOutcome, 1), jobs: make(chan *actors.Job, 1)}
	g := rescaleJob{Keys: cfg.Keys, Parallelism: cfg.From, SleepMs: cfg.SleepMs, StateBytes: cfg.StateBytes}.build(pace, log, run)
	opts = append([]weir.RunOption{
		weir.WithLogger(zerolog.New(os.Stderr).Level(zerolog.WarnLevel).With().Timestamp().Logger()),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: cfg.Mode, Interval: cfg.Interval, StateDir: stateDir, Retain: 2}),
		weir.WithJobObserver(func(j *actors.Job) { r.jobs <- j }),
	}, opts...)
	go func() {
		res, err := weir.Run(rctx, g, opts...)
		r.done <- runOutcome{res, err}
	}()
	return r
}

// stop stops the run (a stop checkpoint, as on SIGINT), waits for it and
// adds its task failures to failures.
func (r *benchRun) stop(failures *int) error {
	r.cancel()
	o := <-r.done
	if o.err != nil {
		return fmt.Errorf("run: %w", o.err)
	}
	*failures += o.res.Failures
	return nil
}

// startWait bounds the wait for a run's sources to open.
const startWait = time.Minute

// waitStarted waits for the pacer to start (the first source opened).
func (r *benchRun) waitStarted(ctx context.Context, pace *pacer) error {
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case <-pace.began:
		return nil
	case o := <-r.done:
		return fmt.Errorf("the job ended before its sources opened: %v", o.err)
	case <-t.C:
		r.cancel()
		return fmt.Errorf("the job's sources did not open within %v", startWait)
	case <-ctx.Done():
		r.cancel()
		return ctx.Err()
	}
}

// sleepUntil waits until at (since the pacer's start), or until the run
// ends or ctx does.
func (r *benchRun) sleepUntil(ctx context.Context, pace *pacer, at time.Duration) error {
	t := time.NewTimer(time.Until(pace.start.Add(at)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case o := <-r.done:
		r.done <- o // for stop
		return fmt.Errorf("the job ended early: %v", o.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newCaseDir is a fresh checkpoint directory for a case.
func newCaseDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "weir-bench-rescale-")
	if err != nil {
		return "", nil, fmt.Errorf("state dir: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// runLiveCase runs the job once and rescales count live at the two moments.
func runLiveCase(ctx context.Context, cfg rescaleBenchConfig, plans []plannedRescale, progress io.Writer) (*rescaleCaseResult, error) {
	dir, cleanup, err := newCaseDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	pace := newPacer(cfg.Rate)
	log := newLatencyLog(pace, cfg.From)
	waits := startCPUWaits()
	defer waits.stop()
	r := startBenchRun(ctx, cfg, pace, log, 0, dir)
	if err := r.waitStarted(ctx, pace); err != nil {
		return nil, fmt.Errorf("%s: %w", caseLive, err)
	}
	job := <-r.jobs
	var steps []rescaleStepResult
	failures := 0
	for i, at := range []time.Duration{cfg.firstRescale(), cfg.secondRescale()} {
		if err := r.sleepUntil(ctx, pace, at); err != nil {
			r.stop(&failures)
			return nil, fmt.Errorf("%s: %w", caseLive, err)
		}
		p := plans[i]
		req := pace.since(time.Now())
		got, err := job.Rescale(ctx, map[string]int{"count": p.To})
		end := pace.since(time.Now())
		if err != nil {
			r.stop(&failures)
			return nil, fmt.Errorf("%s: rescale count %d→%d: %w", caseLive, p.From, p.To, err)
		}
		if got.Moved != len(p.Moved) || got.Minimum != p.Minimum {
			r.stop(&failures)
			return nil, fmt.Errorf("%s: rescale count %d→%d moved %d (min %d) key groups, but the bench classifies keys by %d (min %d)",
				caseLive, p.From, p.To, got.Moved, got.Minimum, len(p.Moved), p.Minimum)
		}
		fmt.Fprintf(progress, "%s: count %d→%d at %.1f s committed in %.0f ms (%.0f ms waiting for a checkpoint): moved %d key groups (min %d), %d bytes, longest pause %.0f ms\n",
			caseLive, p.From, p.To, req.Seconds(), ms(end-req), ms(got.Waited), got.Moved, got.Minimum, got.Bytes, ms(got.LongestPause))
		steps = append(steps, rescaleStepResult{From: p.From, To: p.To, Moved: got.Moved, Minimum: got.Minimum, WaitedMs: ms(got.Waited), Bytes: got.Bytes,
			LongestPauseMs: ms(got.LongestPause), Runtime: got.Flow, moment: rescaleMoment{Request: req, Start: min(req+got.Waited, end), End: end, Moved: p.Moved}})
	}
	if err := r.sleepUntil(ctx, pace, cfg.end()); err != nil {
		r.stop(&failures)
		return nil, fmt.Errorf("%s: %w", caseLive, err)
	}
	if err := r.stop(&failures); err != nil {
		return nil, fmt.Errorf("%s: %w", caseLive, err)
	}
	waits.stop()
	c := caseFigures(caseLive, cfg, log.samples(), steps)
	addCPUWaits(c, cfg, log.samples(), waits, pace.start)
	c.Failures = failures
	return c, nil
}

// runRestoreCase runs the job, stops it with a checkpoint at each moment
// and restores it at the next parallelism.
func runRestoreCase(ctx context.Context, cfg rescaleBenchConfig, plans []plannedRescale, progress io.Writer) (*rescaleCaseResult, error) {
	dir, cleanup, err := newCaseDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	pace := newPacer(cfg.Rate)
	log := newLatencyLog(pace, cfg.From)
	waits := startCPUWaits()
	defer waits.stop()
	r := startBenchRun(ctx, cfg, pace, log, 0, dir)
	if err := r.waitStarted(ctx, pace); err != nil {
		return nil, fmt.Errorf("%s: %w", caseRestore, err)
	}
	var steps []rescaleStepResult
	failures := 0
	for i, at := range []time.Duration{cfg.firstRescale(), cfg.secondRescale()} {
		if err := r.sleepUntil(ctx, pace, at); err != nil {
			r.stop(&failures)
			return nil, fmt.Errorf("%s: %w", caseRestore, err)
		}
		p := plans[i]
		req := pace.since(time.Now())
		if err := r.stop(&failures); err != nil {
			return nil, fmt.Errorf("%s: stop before count %d→%d: %w", caseRestore, p.From, p.To, err)
		}
		stopped := pace.since(time.Now())
		r = startBenchRun(ctx, cfg, pace, log, i+1, dir, weir.WithRestore("latest"), weir.WithOperatorParallelism(map[string]int{"count": p.To}))
		steps = append(steps, rescaleStepResult{From: p.From, To: p.To, StopMs: ms(stopped - req), Moved: len(p.Moved), Minimum: p.Minimum,
			moment: rescaleMoment{Request: req, Start: req, Moved: p.Moved}})
	}
	if err := r.sleepUntil(ctx, pace, cfg.end()); err != nil {
		r.stop(&failures)
		return nil, fmt.Errorf("%s: %w", caseRestore, err)
	}
	if err := r.stop(&failures); err != nil {
		return nil, fmt.Errorf("%s: %w", caseRestore, err)
	}
	samples := log.samples()
	for i := range steps {
		first, ok := firstOut(samples, i+1)
		if !ok {
			return nil, fmt.Errorf("%s: the job restored at count %d delivered nothing", caseRestore, steps[i].To)
		}
		steps[i].moment.End = first
		fmt.Fprintf(progress, "%s: count %d→%d at %.1f s: stopped in %.0f ms, records flowing again after %.0f ms\n",
			caseRestore, steps[i].From, steps[i].To, steps[i].moment.Request.Seconds(), steps[i].StopMs, ms(first-steps[i].moment.Request))
	}
	waits.stop()
	c := caseFigures(caseRestore, cfg, samples, steps)
	addCPUWaits(c, cfg, samples, waits, pace.start)
	c.Failures = failures
	return c, nil
}

// caseFigures computes a case's throughput, disruption and latencies.
func caseFigures(name string, cfg rescaleBenchConfig, samples []latencySample, steps []rescaleStepResult) *rescaleCaseResult {
	coarse := newTimeline(samples, cfg.end(), rescaleBucket)
	fine := newFineCurve(samples, cfg.end(), cfg.Window)
	c := &rescaleCaseResult{Case: name, SteadyPerS: coarse.mean(cfg.Warmup, cfg.firstRescale()), RecordsPerS: coarse.perSecond()}
	for i := range steps {
		s := &steps[i]
		m := s.moment
		next := cfg.end()
		if i+1 < len(steps) {
			next = steps[i+1].moment.Request
		}
		s.RequestS, s.TookMs = m.Request.Seconds(), ms(m.End-m.Request)
		s.ZeroBuckets, s.LowestRecordsPerS = coarse.zeroBuckets(m.Start, m.End)
		below, _ := fine.disruption(m.Start, m.End, next, c.SteadyPerS)
		fromRequest, _ := fine.disruption(m.Request, m.End, next, c.SteadyPerS)
		s.DisruptionMs, s.DisruptionFromRequestMs = ms(below), ms(fromRequest)
		mean, worst := fine.noise(cfg.Warmup, cfg.firstRescale(), m.End-m.Start, c.SteadyPerS)
		s.NoiseMs, s.NoiseWorstMs = ms(mean), ms(worst)
		s.Before = latencyIn(samples, beforeFrom(cfg, steps, i), m.Request, m.Moved)
		s.During = latencyIn(samples, m.Start, m.End+duringTail, m.Moved)
		c.DisruptionMs += s.DisruptionMs
		c.DisruptionFromRequestMs += s.DisruptionFromRequestMs
		c.NoiseMs += s.NoiseMs
	}
	c.Steps = steps
	return c
}

// beforeFrom is where the latency before rescale i is measured from: the
// --steady window before its request, starting no earlier than the warmup's
// end, nor than duringTail after the rescale before it ended.
func beforeFrom(cfg rescaleBenchConfig, steps []rescaleStepResult, i int) time.Duration {
	from := max(cfg.Warmup, steps[i].moment.Request-cfg.Steady)
	if i > 0 {
		from = max(from, steps[i-1].moment.End+duringTail)
	}
	return from
}
