package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
)

// rescaleBenchConfig is what `node bench rescale` runs.
type rescaleBenchConfig struct {
	Keys int
	// StateBytes pads each key's state (besides its 8-byte count); both
	// cases run with the same state.
	StateBytes int
	Rate       float64 // records/s the source is paced at
	From, To   int     // count goes From → To → From
	SleepMs    float64 // average sleep per record in count
	// Warmup is left out of every figure; Steady, after it, is the window
	// of the figures before the rescales; Between is the time from one
	// rescale's request to the next and from the second to the end.
	Warmup, Steady, Between time.Duration
	Mode                    weir.CheckpointMode
	Interval                time.Duration
	// Window is the sliding window of the disruption measure.
	Window time.Duration
	Plot   string
}

// Timeline of a case, in time since its start.
func (c rescaleBenchConfig) firstRescale() time.Duration  { return c.Warmup + c.Steady }
func (c rescaleBenchConfig) secondRescale() time.Duration { return c.firstRescale() + c.Between }
func (c rescaleBenchConfig) end() time.Duration           { return c.secondRescale() + c.Between }

// defaultDisruptionWindow is the sliding window of the disruption measure:
// two of a sink's flush intervals, so that an undisturbed stream's buffers
// keep every window near the steady rate.
const defaultDisruptionWindow = 10 * time.Millisecond

// maxRescaleBenchRun bounds a case's length (samples hold µs in 32 bits).
const maxRescaleBenchRun = 30 * time.Minute

// validate says what is wrong with the flags.
func (c rescaleBenchConfig) validate() error {
	switch {
	case c.Keys < 1 || c.Keys > 10_000_000:
		return fmt.Errorf("--keys %d: want 1 … 10000000", c.Keys)
	case c.StateBytes < 0 || c.StateBytes > 1<<20:
		return fmt.Errorf("--state-bytes %d: want 0 … 1048576", c.StateBytes)
	case c.Window < fineStep || c.Window > time.Second || c.Window%fineStep != 0:
		return fmt.Errorf("--window %v: want %v … 1s, a multiple of %v", c.Window, fineStep, fineStep)
	case c.Rate < 1 || c.Rate > 1_000_000:
		return fmt.Errorf("--rate %v: want 1 … 1000000 records/s", c.Rate)
	case c.From < 1 || c.From > weir.DefaultMaxParallelism || c.To < 1 || c.To > weir.DefaultMaxParallelism || c.From == c.To:
		return fmt.Errorf("--from %d --to %d: want two different parallelisms in 1 … %d", c.From, c.To, weir.DefaultMaxParallelism)
	case c.SleepMs < 0 || c.SleepMs > 1000:
		return fmt.Errorf("--sleep-ms %v: want 0 … 1000", c.SleepMs)
	case c.Warmup < 0 || c.Warmup%rescaleBucket != 0:
		return fmt.Errorf("--warmup %v: want ≥ 0 and a multiple of %v", c.Warmup, rescaleBucket)
	case c.Steady < time.Second/2 || c.Steady%rescaleBucket != 0:
		return fmt.Errorf("--steady %v: want ≥ 500ms and a multiple of %v", c.Steady, rescaleBucket)
	case c.Between < time.Second || c.Between%rescaleBucket != 0:
		return fmt.Errorf("--between %v: want ≥ 1s and a multiple of %v", c.Between, rescaleBucket)
	case c.end() > maxRescaleBenchRun:
		return fmt.Errorf("--warmup + --steady + 2 × --between is %v: want at most %v", c.end(), maxRescaleBenchRun)
	case c.Mode != weir.CheckpointAligned && c.Mode != weir.CheckpointUnaligned:
		return fmt.Errorf("--checkpoint-mode %q: want aligned or unaligned (stop-and-restore needs checkpoints)", c.Mode)
	case c.Interval < time.Millisecond || c.Interval > time.Hour:
		return fmt.Errorf("--checkpoint-interval %v: want 1ms … 1h", c.Interval)
	}
	return nil
}

// runRescaleBench is `node bench rescale`.
func runRescaleBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := rescaleBenchConfig{Keys: 100_000, Rate: 100_000, From: 2, To: 3, Warmup: 2 * time.Second, Steady: 3 * time.Second,
		Between: 5 * time.Second, Mode: weir.CheckpointUnaligned, Interval: time.Second, Window: defaultDisruptionWindow}
	fs := flag.NewFlagSet("node bench rescale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys of the running count")
	fs.IntVar(&cfg.StateBytes, "state-bytes", cfg.StateBytes, "bytes of state per key besides its 8-byte count, in both cases (0: the smallest state, the case most favourable to stop-and-restore)")
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "sliding window of the disruption measure (throughput at the sinks in 1 ms steps)")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "records/s the source produces (each record's latency counts from when it was due)")
	fs.IntVar(&cfg.From, "from", cfg.From, "parallelism of the job, and of count before and after the rescales")
	fs.IntVar(&cfg.To, "to", cfg.To, "parallelism of count between the two rescales")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", cfg.SleepMs, "average sleep per record in count")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "time from the start left out of every figure")
	fs.DurationVar(&cfg.Steady, "steady", cfg.Steady, "time after the warmup over which steady throughput and latency before the rescales are measured")
	fs.DurationVar(&cfg.Between, "between", cfg.Between, "time from the first rescale to the second and from the second to the end")
	mode := fs.String("checkpoint-mode", string(cfg.Mode), "checkpoint mode of both cases: aligned or unaligned")
	fs.DurationVar(&cfg.Interval, "checkpoint-interval", cfg.Interval, "checkpoint interval of both cases")
	fs.StringVar(&cfg.Plot, "plot", "", "also draw both cases' throughput over time, the rescales marked, as an SVG chart into `FILE` (of the last run, with --runs)")
	runs := fs.Int("runs", 1, "run both cases this many times, one after the other, and judge the targets by the median run (each run's figures are printed too)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	cfg.Mode = weir.CheckpointMode(*mode)
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "node bench rescale: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "node bench rescale: %v\n", err)
		return cli.ExitUsage
	}
	if *runs < 1 || *runs > maxRescaleBenchRuns {
		fmt.Fprintf(stderr, "node bench rescale: --runs %d: want 1 … %d\n", *runs, maxRescaleBenchRuns)
		return cli.ExitUsage
	}
	all, err := benchRescaleRuns(ctx, cfg, *runs, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "node bench rescale: %v\n", err)
		return cli.ExitFailure
	}
	if cfg.Plot != "" {
		// The last run's chart.
		if err := writeSVG(cfg.Plot, rescalePlot(cfg, all[len(all)-1])); err != nil {
			fmt.Fprintf(stderr, "node bench rescale: %v\n", err)
			return cli.ExitFailure
		}
	}
	var out any = all[0]
	var targets []rescaleTarget
	if len(all) > 1 {
		var per [][]rescaleTarget
		for _, res := range all {
			per = append(per, res.Targets)
		}
		targets = medianTargets(per)
		out = rescaleRunsResult{Runs: all, Targets: targets}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			fmt.Fprintf(stderr, "node bench rescale: %v\n", err)
			return cli.ExitFailure
		}
		return cli.ExitOK
	}
	if len(all) > 1 {
		writeRescaleRuns(stdout, cfg, all, targets)
		return cli.ExitOK
	}
	writeRescaleTable(stdout, cfg, all[0])
	return cli.ExitOK
}

// maxRescaleBenchRuns bounds --runs.
const maxRescaleBenchRuns = 100
