package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/samples/backpressure"
)

// registerBench adds `node bench backpressure`.
func registerBench() {
	cli.RegisterCommand("bench", "backpressure|cluster|recovery|metrics|nexmark|state|rescale [flags]",
		"run a benchmark: backpressure (the FLIP-76 experiment), cluster (3 node processes vs one; wire bytes; SIGKILL recovery), recovery (a state-heavy job's restart of one node and of the whole cluster, local recovery on and off), metrics (keycount with /metrics served and scraped vs not), nexmark (a Nexmark query or all: events/s and events/s per core used, unaligned checkpoints every 10 s) state (large keyed state checkpointed every second: throughput, p99 latency, checkpoint duration and bytes, the task's longest stall at a barrier; asynchronous snapshots on and off) or rescale (a keyed count rescaled 2→3→2 live vs stopped with a checkpoint and restored: throughput per 100 ms, latency of moved and unmoved keys, disruption)", runBench)
}

// runBench parses the bench flags, runs the experiment and prints the table.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "cluster" {
		return runClusterBench(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "recovery" {
		return runRecoveryBench(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "nexmark" {
		return runNexmarkBench(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "state" {
		return runStateBench(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "metrics" {
		return runMetricsBench(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rescale" {
		return runRescaleBench(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "backpressure" {
		fmt.Fprintf(stderr, "node bench: want a benchmark name: backpressure, cluster, recovery, metrics, nexmark, state or rescale (got %q)\n", strings.Join(args, " "))
		return cli.ExitUsage
	}
	cfg := backpressure.DefaultBenchConfig()
	fs := flag.NewFlagSet("node bench backpressure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "one repetition of shorter cells (about a minute in all)")
	asJSON := fs.Bool("json", false, "print the rows as a JSON list instead of a table")
	plotFile := fs.String("plot", "", "also draw checkpoint duration per sleep and mode as an SVG chart into `FILE`")
	sleeps := fs.String("sleep-ms", "0,0.01,0.1", "comma-separated average sleeps per record of the sleepy map")
	modes := fs.String("modes", "none,aligned,unaligned", "comma-separated checkpoint modes")
	fs.IntVar(&cfg.Parallelism, "parallelism", cfg.Parallelism, "parallelism of every operator")
	fs.IntVar(&cfg.Repetitions, "repetitions", cfg.Repetitions, "runs per cell; the median is reported")
	fs.DurationVar(&cfg.Cell, "cell", cfg.Cell, "duration of one run")
	fs.DurationVar(&cfg.Interval, "checkpoint-interval", cfg.Interval, "checkpoint interval")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "where the runs keep checkpoints (default: a temporary directory)")
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "node bench backpressure: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	}
	if *quick {
		cfg.Repetitions, cfg.Cell = 1, 5*time.Second
	}
	var err error
	if cfg.SleepsMs, err = parseFloats(*sleeps); err != nil {
		fmt.Fprintf(stderr, "node bench backpressure: --sleep-ms: %v\n", err)
		return cli.ExitUsage
	}
	cfg.Modes = nil
	for _, m := range strings.Split(*modes, ",") {
		mode, err := weir.ParseCheckpointMode(strings.TrimSpace(m))
		if err != nil {
			fmt.Fprintf(stderr, "node bench backpressure: --modes: %v\n", err)
			return cli.ExitUsage
		}
		cfg.Modes = append(cfg.Modes, mode)
	}
	total := len(cfg.SleepsMs) * len(cfg.Modes) * cfg.Repetitions
	done := 0
	start := time.Now()
	cfg.Progress = func(r backpressure.BenchRun) {
		done++
		fmt.Fprintf(stderr, "bench %d/%d  sleep %v ms  %-9s rep %d: %.0f records/s, %d checkpoints, p50 %.1f ms (%s elapsed)\n",
			done, total, r.SleepMs, r.Mode, r.Repetition, r.RecordsPerS, r.Checkpoints, r.CheckpointP50, time.Since(start).Round(time.Second))
	}
	rows, err := backpressure.RunBench(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "node bench backpressure: %v\n", err)
		return cli.ExitFailure
	}
	if *plotFile != "" {
		if err := writeSVG(*plotFile, backpressurePlot(rows)); err != nil {
			fmt.Fprintf(stderr, "node bench backpressure: %v\n", err)
			return cli.ExitFailure
		}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(rows); err != nil {
			fmt.Fprintf(stderr, "node bench backpressure: %v\n", err)
			return cli.ExitFailure
		}
		return cli.ExitOK
	}
	printBenchTable(stdout, rows)
	return cli.ExitOK
}

// printBenchTable prints one line per cell.
func printBenchTable(w io.Writer, rows []backpressure.BenchRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sleep_ms\tmode\trecords/s\tckpt p50 ms\tckpt p95 ms\tinflight p50 bytes\tinflight ref p50 bytes\tcheckpoints\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%v\t%s\t%.0f\t%.1f\t%.1f\t%.0f\t%.0f\t%d\t\n", r.SleepMs, r.Mode, r.RecordsPerS,
			r.CheckpointMsP50, r.CheckpointMsP95, r.InflightBytesP50, r.InflightRefBytesP50, r.Checkpoints)
	}
	tw.Flush()
}

// parseFloats parses a comma-separated list of non-negative numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a non-negative number", f)
		}
		out = append(out, v)
	}
	return out, nil
}
