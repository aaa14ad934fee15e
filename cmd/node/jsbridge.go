package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cli"
	wjs "github.com/weirstream/weir/jetstream"
	"github.com/weirstream/weir/samples/jsbridge"
)

// Defaults of the jsbridge job and the js-fill command.
const (
	defaultInStream  = "jsin"
	defaultOutStream = "jsout"
	defaultSplits    = 4
)

// jsbridgeFlags declares the flags jsbridge and js-fill share into cfg.
func jsbridgeFlags(fs *flag.FlagSet, cfg *jsbridge.Config) {
	fs.StringVar(&cfg.URL, "nats", "", "NATS server `URL` holding the streams (default $NATS_URL, else "+nats.DefaultURL+")")
	fs.StringVar(&cfg.In, "in-stream", defaultInStream, "input stream `NAME`: JSON events {key,seq} on subjects NAME.0 … NAME.<splits-1>")
	fs.IntVar(&cfg.Splits, "splits", defaultSplits, "input subjects, one split each (the source's parallelism can change on --restore)")
	fs.StringVar(&cfg.Out, "out-stream", defaultOutStream, "output stream `NAME`: JSON counts {key,count} on subject NAME.counts")
}

// registerJetStream registers the jsbridge job and the js-fill command.
func registerJetStream() {
	cli.RegisterWithFlags("jsbridge",
		"JetStream → keyed running count → JetStream, exactly once with checkpoints: reads --in-stream (fill it with `node js-fill`), writes --out-stream; ends when it has read what the input held at start unless --follow",
		func(fs *flag.FlagSet) cli.JobBuilder {
			var cfg jsbridge.Config
			jsbridgeFlags(fs, &cfg)
			fs.BoolVar(&cfg.Follow, "follow", false, "keep reading new input instead of ending")
			return func(p cli.JobParams) (*cli.Job, error) {
				cfg.Parallelism = p.Parallelism
				g, err := jsbridge.Build(cfg)
				if err != nil {
					return nil, err
				}
				return &cli.Job{Graph: g}, nil
			}
		})
	cli.RegisterCommand("js-fill", "[--records N] [--keys K] [--from I] [flags]",
		"create jsbridge's input and output streams if missing and publish events I … I+N-1 (event i: key k<i mod K> on <in-stream>.<i mod splits>)", runJSFill)
}

// runJSFill is `node js-fill`.
func runJSFill(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("node js-fill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := jsbridge.FillConfig{Config: jsbridge.Config{Parallelism: 1}}
	jsbridgeFlags(fs, &cfg.Config)
	fs.Int64Var(&cfg.Records, "records", 100_000, "events to publish")
	fs.Int64Var(&cfg.From, "from", 0, "index of the first event")
	fs.IntVar(&cfg.Keys, "keys", 1000, "distinct keys")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "js-fill: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	}
	url := wjs.ResolveURL(cfg.URL)
	nc, err := nats.Connect(url, nats.Name("weir js-fill"))
	if err != nil {
		fmt.Fprintf(stderr, "js-fill: connect to NATS at %s: %v\n", url, err)
		return cli.ExitFailure
	}
	defer nc.Close()
	last, err := jsbridge.Fill(nc, cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return cli.ExitFailure
	}
	fmt.Fprintf(stdout, "published %d events to stream %s (subjects %s.0 … %s.%d), last sequence %d\n",
		cfg.Records, cfg.In, cfg.In, cfg.In, cfg.Splits-1, last)
	return cli.ExitOK
}
