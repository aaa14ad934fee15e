package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/web"
)

// progressInterval is how often a running job logs its progress.
const progressInterval = 2 * time.Second

// run is `node run JOB [flags]`.
func (r *registry) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	spec, err := r.parseJob("run", args, true)
	if errors.Is(err, flag.ErrHelp) {
		r.writeRunUsage(stdout)
		if named, ok := r.findJob(args); ok {
			writeJobFlags(stdout, named)
		}
		return nil
	}
	if err != nil {
		return err
	}
	f, entry, job := spec.flags, spec.entry, spec.job
	if f.params.Out != "" && f.restore == "" {
		if err := weir.TruncateOutput(f.params.Out); err != nil {
			return fmt.Errorf("run %s: %w", entry.name, err)
		}
	}
	level, _ := f.level() // checked by finish
	// The runtime names the job in its own log lines; these name it here.
	base := newLogger(stderr, level, f.pretty)
	log := base.With().Str("job", entry.name).Logger()
	opts := []weir.RunOption{
		weir.WithLogger(base),
		weir.WithProgress(progressInterval),
		weir.WithRuntime(f.runtimeOptions()),
		weir.WithCheckpoints(f.checkpointConfig()),
		weir.WithSupervision(f.supervisionConfig()),
	}
	if f.duration > 0 {
		opts = append(opts, weir.WithDuration(f.duration))
	}
	if f.drain {
		opts = append(opts, weir.WithDrain())
	}
	if f.restore != "" {
		opts = append(opts, weir.WithRestore(f.restore))
	}
	if len(f.operators) > 0 {
		opts = append(opts, weir.WithOperatorParallelism(f.operators))
	}
	if f.http != "" {
		ln, err := listenHTTP(f.http)
		if err != nil {
			return usagef("run: %v", err)
		}
		reg := metrics.New()
		jobs := &runJobs{}
		srv := serveHTTP(ln, httpSource{Metrics: reg, Job: entry.name, Web: web.NewLocalSource("local", jobs.list)}, base)
		defer srv.Close()
		announceWeb(stderr, base, srv)
		opts = append(opts, weir.WithMetrics(reg), weir.WithJobObserver(jobs.add))
	}
	if len(f.rescale) > 0 {
		opts = append(opts, weir.WithRescaleSchedule(f.rescale...))
	}
	log.Info().Int("parallelism", f.params.Parallelism).Int64("records", f.params.Records).
		Str("checkpoint_mode", f.checkpointMode).Msg("job starting")
	defer dumpOnSignal(stderr)() // SIGUSR1 prints the actors' state
	res, err := weir.Run(ctx, job.Graph, opts...)
	if err != nil {
		log.Error().Err(err).Msg("job failed")
		return fmt.Errorf("job %s failed: %w", entry.name, err)
	}
	sum := NewSummary(res, f.params.Parallelism)
	log.Info().Int64("records_in", sum.RecordsIn).Int64("records_out", sum.RecordsOut).
		Float64("duration_s", sum.DurationS).Float64("records_per_s", sum.RecordsPerS).
		Int("checkpoints", len(sum.Checkpoints)).Msg("run summary")
	if f.json {
		if err := sum.WriteJSON(stdout); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
		return rescaleFailed(sum)
	}
	if err := sum.WriteText(stdout); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if job.Report != nil {
		if err := job.Report(stdout); err != nil {
			return fmt.Errorf("job %s report: %w", entry.name, err)
		}
	}
	return rescaleFailed(sum)
}

// rescaleFailed is an error naming the first --rescale step that failed.
func rescaleFailed(sum Summary) error {
	for _, r := range sum.Rescales {
		if r.Err != "" {
			return fmt.Errorf("--rescale step %d failed: %s", r.Step, r.Err)
		}
	}
	return nil
}

// doubleDash spells the flag package's "-name" as "--name", as the help does.
func doubleDash(err error) string {
	r := strings.NewReplacer("defined: -", "defined: --", "flag -", "flag --", "argument: -", "argument: --")
	return r.Replace(err.Error())
}
