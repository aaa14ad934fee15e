package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/samples/nexmark"
)

// nexmarkFlags declares the generator and query flags `node run nexmark`
// and `node bench nexmark` share.
type nexmarkFlags struct {
	query  string
	events int64
	rate   int
}

func (f *nexmarkFlags) declare(fs *flag.FlagSet, queryHelp string) {
	fs.StringVar(&f.query, "query", "q0", queryHelp)
	fs.Int64Var(&f.events, "events", 1_000_000, "events to generate (people, auctions and bids 1:3:46)")
	fs.IntVar(&f.rate, "rate", nexmark.DefaultConfig(0).Rate, "events per second of event time (event i happens at i/rate s)")
}

// registerNexmark registers the nexmark job.
func registerNexmark() {
	cli.RegisterWithFlags("nexmark",
		"a Nexmark query (--query "+strings.Join(nexmark.Queries(), "|")+") over --events generated events (--seed); --out writes the results as JSON lines, else they are counted and discarded",
		func(fs *flag.FlagSet) cli.JobBuilder {
			var f nexmarkFlags
			f.declare(fs, "the query: "+strings.Join(nexmark.Queries(), ", "))
			return func(p cli.JobParams) (*cli.Job, error) {
				gen := nexmark.DefaultConfig(p.Seed)
				gen.Rate = f.rate
				cfg := nexmark.JobConfig{Query: f.query, Events: f.events, Generator: gen, Parallelism: p.Parallelism,
					Out: nexmark.Output{File: p.Out}, SleepMs: p.SleepMs}
				if p.Out == "" {
					cfg.Out.Discarded = new(atomic.Int64)
				}
				g, err := nexmark.Build(cfg)
				if err != nil {
					return nil, err
				}
				job := &cli.Job{Graph: g}
				if discarded := cfg.Out.Discarded; discarded != nil {
					job.Report = func(w io.Writer) error {
						_, err := fmt.Fprintf(w, "nexmark %s: %d results (discarded; --out writes them)\n", f.query, discarded.Load())
						return err
					}
				}
				return job, nil
			}
		})
}
