package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/samples/keycount"
)

// metricsBenchConfig is `node bench metrics`.
type metricsBenchConfig struct {
	records     int64
	keys        int
	parallelism int
	reps        int
	scrapeEvery time.Duration
}

// runMetricsBench runs keycount with its metrics served on a listener and
// scraped, and without, alternately (in ABBA order), and prints the median
// throughput of each and their ratio. The runtime's counters are kept in
// both: they are always on.
func runMetricsBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := metricsBenchConfig{}
	fs := flag.NewFlagSet("node bench metrics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&cfg.records, "records", 5_000_000, "records per run")
	fs.IntVar(&cfg.keys, "keys", 1000, "distinct keys")
	fs.IntVar(&cfg.parallelism, "parallelism", 2, "parallelism of source and count")
	fs.IntVar(&cfg.reps, "repetitions", 5, "runs of each configuration, alternating; the median is reported")
	fs.DurationVar(&cfg.scrapeEvery, "scrape-every", time.Second, "with metrics on: time between scrapes of /metrics")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "node bench metrics: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	case cfg.records < 1 || cfg.keys < 1 || cfg.parallelism < 1 || cfg.reps < 1:
		fmt.Fprintln(stderr, "node bench metrics: --records, --keys, --parallelism and --repetitions must be at least 1")
		return cli.ExitUsage
	case cfg.scrapeEvery < 10*time.Millisecond:
		fmt.Fprintf(stderr, "node bench metrics: --scrape-every %v must be at least 10ms\n", cfg.scrapeEvery)
		return cli.ExitUsage
	}
	var off, on []float64
	var scrapes int
	for rep := 1; rep <= cfg.reps; rep++ {
		// Off then on, then on then off: neither always runs second.
		order := []bool{false, true}
		if rep%2 == 0 {
			order = []bool{true, false}
		}
		for _, served := range order {
			rate, n, err := metricsBenchRun(ctx, cfg, served)
			if err != nil {
				fmt.Fprintf(stderr, "node bench metrics: %v\n", err)
				return cli.ExitFailure
			}
			if served {
				on, scrapes = append(on, rate), scrapes+n
			} else {
				off = append(off, rate)
			}
			fmt.Fprintf(stderr, "rep %d  metrics served %-5v  %.0f records/s  (%d scrapes)\n", rep, served, rate, n)
		}
	}
	mOff, mOn := median(off), median(on)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metrics and --http\trecords/s (median)\truns\tscrapes\t")
	fmt.Fprintf(tw, "off\t%.0f\t%d\t0\t\n", mOff, len(off))
	fmt.Fprintf(tw, "on, scraped every %v\t%.0f\t%d\t%d\t\n", cfg.scrapeEvery, mOn, len(on), scrapes)
	tw.Flush()
	fmt.Fprintf(stdout, "on / off: %.1f %%\n", 100*mOn/mOff)
	return cli.ExitOK
}

// metricsBenchRun runs keycount once; served serves its registry on a
// loopback listener and scrapes it every cfg.scrapeEvery. It returns the
// run's records per second and the scrapes made.
func metricsBenchRun(ctx context.Context, cfg metricsBenchConfig, served bool) (float64, int, error) {
	g, err := keycount.Build(keycount.Config{Records: cfg.records, Keys: cfg.keys, Parallelism: cfg.parallelism})
	if err != nil {
		return 0, 0, err
	}
	dir, err := os.MkdirTemp("", "weir-bench-metrics-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	cp := weir.DefaultCheckpointConfig()
	cp.StateDir = dir
	opts := []weir.RunOption{weir.WithCheckpoints(cp)}
	scrapes := 0
	if served {
		reg := metrics.New()
		opts = append(opts, weir.WithMetrics(reg))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		srv := &http.Server{Handler: reg.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln) //nolint:errcheck // ends with Close below
		defer srv.Close()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(cfg.scrapeEvery)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if resp, err := http.Get("http://" + ln.Addr().String() + "/metrics"); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						scrapes++
					}
				}
			}
		}()
		defer func() { close(stop); wg.Wait() }()
	}
	res, err := weir.Run(ctx, g, opts...)
	if err != nil {
		return 0, 0, err
	}
	return res.RecordsPerSecond(), scrapes, nil
}

// median is the middle value of v (the mean of the two middle ones).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
