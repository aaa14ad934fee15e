package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/samples/nexmark"
)

// nexmarkBenchRow is one query's run: throughput by wall time and by the
// process's CPU time, and its peak memory.
type nexmarkBenchRow struct {
	Query         string  `json:"query"`
	Events        int64   `json:"events"`
	Results       int64   `json:"results"`
	Parallelism   int     `json:"parallelism"`
	Seconds       float64 `json:"seconds"`
	CPUSeconds    float64 `json:"cpu_seconds"` // user + sys of the process over the run
	EventsPerS    float64 `json:"events_per_s"`
	EventsPerCore float64 `json:"events_per_cpu_s"` // events / CPU seconds
	CoresUsed     float64 `json:"cores_used"`
	MaxRSSMB      float64 `json:"max_rss_mb"` // the process's peak resident memory
	Checkpoints   int     `json:"checkpoints"`
}

// runNexmarkBench is `node bench nexmark`: one query in this process, or
// every query (--query all), each in a child process of its own so its
// peak memory is its own.
func runNexmarkBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("node bench nexmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f nexmarkFlags
	f.declare(fs, "the query, or all: "+fmt.Sprint(nexmark.Queries()))
	parallelism := fs.Int("parallelism", 1, "instances of each operator")
	seed := fs.Int64("seed", 1, "the generator's seed")
	interval := fs.Duration("checkpoint-interval", 10*time.Second, "time between unaligned checkpoints")
	asJSON := fs.Bool("json", false, "print the rows as JSON lines instead of a table")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to `FILE` (one query)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "node bench nexmark: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	case f.events < 1 || *parallelism < 1 || *interval < time.Millisecond:
		fmt.Fprintln(stderr, "node bench nexmark: --events and --parallelism must be at least 1, --checkpoint-interval at least 1ms")
		return cli.ExitUsage
	case f.query == "all" && *cpuProfile != "":
		fmt.Fprintln(stderr, "node bench nexmark: --cpuprofile profiles one query, not all")
		return cli.ExitUsage
	}
	var rows []nexmarkBenchRow
	if f.query == "all" {
		for _, q := range nexmark.Queries() {
			row, err := nexmarkBenchChild(ctx, q, args, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "node bench nexmark: %s: %v\n", q, err)
				return cli.ExitFailure
			}
			fmt.Fprintf(stderr, "%s: %.0f events/s, %.0f events/s per core\n", q, row.EventsPerS, row.EventsPerCore)
			rows = append(rows, row)
		}
	} else {
		if *cpuProfile != "" {
			out, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintf(stderr, "node bench nexmark: %v\n", err)
				return cli.ExitFailure
			}
			defer out.Close()
			if err := pprof.StartCPUProfile(out); err != nil {
				fmt.Fprintf(stderr, "node bench nexmark: start the CPU profile: %v\n", err)
				return cli.ExitFailure
			}
			defer pprof.StopCPUProfile()
		}
		row, err := nexmarkBenchRun(ctx, f, *seed, *parallelism, *interval)
		if err != nil {
			fmt.Fprintf(stderr, "node bench nexmark: %v\n", err)
			return cli.ExitFailure
		}
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				fmt.Fprintf(stderr, "node bench nexmark: %v\n", err)
				return cli.ExitFailure
			}
		}
		return cli.ExitOK
	}
	printNexmarkTable(stdout, rows)
	return cli.ExitOK
}

// nexmarkBenchRun runs one query with unaligned checkpoints every interval
// into a temporary directory and a discarding sink.
func nexmarkBenchRun(ctx context.Context, f nexmarkFlags, seed int64, parallelism int, interval time.Duration) (nexmarkBenchRow, error) {
	gen := nexmark.DefaultConfig(seed)
	gen.Rate = f.rate
	var results atomic.Int64
	g, err := nexmark.Build(nexmark.JobConfig{Query: f.query, Events: f.events, Generator: gen, Parallelism: parallelism,
		Out: nexmark.Output{Discarded: &results}})
	if err != nil {
		return nexmarkBenchRow{}, err
	}
	dir, err := os.MkdirTemp("", "weir-bench-nexmark-")
	if err != nil {
		return nexmarkBenchRow{}, err
	}
	defer os.RemoveAll(dir)
	cp := weir.DefaultCheckpointConfig()
	cp.Mode, cp.Interval, cp.StateDir = weir.CheckpointUnaligned, interval, dir
	before, err := cpuTime()
	if err != nil {
		return nexmarkBenchRow{}, err
	}
	start := time.Now()
	res, err := weir.Run(ctx, g, weir.WithCheckpoints(cp))
	if err != nil {
		return nexmarkBenchRow{}, fmt.Errorf("run %s: %w", f.query, err)
	}
	wall := time.Since(start).Seconds()
	after, err := cpuTime()
	if err != nil {
		return nexmarkBenchRow{}, err
	}
	cpu := (after - before).Seconds()
	row := nexmarkBenchRow{Query: f.query, Events: f.events, Results: results.Load(), Parallelism: parallelism,
		Seconds: wall, CPUSeconds: cpu, EventsPerS: float64(f.events) / wall, Checkpoints: len(res.Checkpoints)}
	if cpu > 0 {
		row.EventsPerCore, row.CoresUsed = float64(f.events)/cpu, cpu/wall
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nexmarkBenchRow{}, fmt.Errorf("getrusage: %w", err)
	}
	row.MaxRSSMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	return row, nil
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// nexmarkBenchChild runs one query in a child `node bench nexmark` with the
// same flags and reads its JSON row.
func nexmarkBenchChild(ctx context.Context, query string, args []string, stderr io.Writer) (nexmarkBenchRow, error) {
	self, err := os.Executable()
	if err != nil {
		return nexmarkBenchRow{}, err
	}
	child := append([]string{"bench", "nexmark"}, withoutFlag(args, "query")...)
	child = append(child, "--query", query, "--json")
	cmd := exec.CommandContext(ctx, self, child...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return nexmarkBenchRow{}, fmt.Errorf("child run: %w", err)
	}
	var row nexmarkBenchRow
	if err := json.Unmarshal(out.Bytes(), &row); err != nil {
		return nexmarkBenchRow{}, fmt.Errorf("child's row %q: %w", out.String(), err)
	}
	return row, nil
}

// withoutFlag drops --name and -name (with its value) from args.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-"+name || a == "--"+name:
			i++ // its value
		case len(a) > len(name)+2 && (a[:len(name)+2] == "-"+name+"=" || (len(a) > len(name)+3 && a[:len(name)+3] == "--"+name+"=")):
		default:
			out = append(out, a)
		}
	}
	return slices.Clip(out)
}

// printNexmarkTable prints one line per query.
func printNexmarkTable(w io.Writer, rows []nexmarkBenchRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tevents\tresults\tparallelism\tseconds\tcpu s\tcores used\tevents/s\tevents/s per core\tmax RSS MB\tcheckpoints\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%d\t\n", r.Query, r.Events, r.Results, r.Parallelism,
			r.Seconds, r.CPUSeconds, r.CoresUsed, r.EventsPerS, r.EventsPerCore, r.MaxRSSMB, r.Checkpoints)
	}
	tw.Flush()
}
