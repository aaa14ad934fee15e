package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/samples/backpressure"
	"github.com/weirstream/weir/samples/bigstate"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/samples/keysum"
	"github.com/weirstream/weir/samples/sessions"
	"github.com/weirstream/weir/samples/wordcount"
)

// topWords is how many words wordcount's report lists.
const topWords = 10

// registerSamples registers the sample jobs with the command line.
func registerSamples() {
	cli.RegisterWithFlags("keycount",
		"keyed running count: record i has key i mod --keys; --out writes {key,count} JSON lines, --staging-dir commits them as transactions of a two-phase sink at --parallelism",
		declareKeycount)
	cli.RegisterJob("wordcount",
		"word count over generated text (--records lines, 500-word Zipf vocabulary, --seed); prints the top 10 words, or --out writes {word,count} JSON lines",
		buildWordcount)
	cli.Register("keysum",
		"keyed running sum behind a forward and a broadcast edge: record i has key i mod --keys (a multiple of --parallelism); --out (required) writes {key,count,sum} JSON lines",
		buildKeysum)
	cli.Register("bigstate",
		"state-heavy keyed job: record i has key i mod --keys, each key keeps --value-bytes bytes of state changed by every record of it; --out writes {key,count,crc} JSON lines",
		buildBigstate)
	cli.Register("backpressure",
		"FLIP-76 benchmark: source → map → map → sleepy map (--sleep-ms) → measure, every edge shuffled; reports latency; --out writes the records as JSON lines",
		buildBackpressure)
	registerJetStream()
	registerNexmark()
	cli.Register("sessions",
		"session windows in event time: --records clicks of --keys users (--seed), out of order by up to 0.5 s, sessions end after 1.5 s of silence; --out (required) writes {key,start,end,value} JSON lines, one per session with its click count, and the hour-late clicks to <out>.late",
		buildSessions)
}

func buildSessions(p cli.JobParams) (*weir.Graph, error) {
	if p.Out == "" {
		return nil, errors.New("sessions: --out is required")
	}
	return sessions.Build(sessions.Config{Records: p.Records, Users: p.Keys, Parallelism: p.Parallelism, Seed: p.Seed,
		Out: p.Out, LateOut: p.Out + ".late", SleepMs: p.SleepMs})
}

// declareKeycount declares keycount's own flags: its staging sink.
func declareKeycount(fs *flag.FlagSet) cli.JobBuilder {
	var staging keycount.StagingDir
	fs.StringVar(&staging.Dir, "staging-dir", "", "write to a two-phase sink at --parallelism instances that commits each checkpoint's records as one file in `DIR` (which every node shares) and, when a live rescale removes an instance, hands what it staged to a remaining one; instead of --out")
	fs.StringVar(&staging.Hold, "staging-hold", "", "with --staging-dir: an instance that reaches `POINT` (hand-off: a removed instance handing off; taken-over-commit: committing what another handed it) while DIR/hold exists writes DIR/held-POINT-INSTANCE and waits until DIR/hold is removed (for tests that kill a node there)")
	return func(p cli.JobParams) (*cli.Job, error) {
		cfg := keycount.Config{Records: p.Records, Keys: p.Keys, Parallelism: p.Parallelism, Out: p.Out, SleepMs: p.SleepMs}
		switch {
		case staging.Dir != "" && p.Out != "":
			return nil, errors.New("--staging-dir and --out: give one")
		case staging.Dir != "":
			if err := staging.Check(); err != nil {
				return nil, err
			}
			cfg.Sink = staging.Sink()
		case staging.Hold != "":
			return nil, errors.New("--staging-hold needs --staging-dir")
		}
		g, err := keycount.Build(cfg)
		if err != nil {
			return nil, err
		}
		return &cli.Job{Graph: g}, nil
	}
}

func buildKeysum(p cli.JobParams) (*weir.Graph, error) {
	return keysum.Build(keysum.Config{
		Records: p.Records, Keys: p.Keys, Parallelism: p.Parallelism, Out: p.Out, SleepMs: p.SleepMs,
	})
}

func buildBigstate(p cli.JobParams) (*weir.Graph, error) {
	return bigstate.Build(bigstate.Config{
		Records: p.Records, Keys: p.Keys, ValueBytes: p.ValueBytes, Parallelism: p.Parallelism, Out: p.Out, SleepMs: p.SleepMs,
	})
}

func buildWordcount(p cli.JobParams) (*cli.Job, error) {
	if p.SleepMs != 0 {
		return nil, errors.New("wordcount has no slow stage: drop --sleep-ms")
	}
	cfg := wordcount.Config{Records: p.Records, Parallelism: p.Parallelism, Seed: p.Seed, Out: p.Out}
	if p.Out == "" {
		cfg.Tally = wordcount.NewTally()
	}
	g, err := wordcount.Build(cfg)
	if err != nil {
		return nil, err
	}
	job := &cli.Job{Graph: g}
	if cfg.Tally != nil {
		job.Report = func(w io.Writer) error {
			if _, err := fmt.Fprintf(w, "top %d words:\n", topWords); err != nil {
				return err
			}
			for i, wc := range cfg.Tally.Top(topWords) {
				if _, err := fmt.Fprintf(w, "%3d. %-8s %d\n", i+1, wc.Word, wc.Count); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return job, nil
}

func buildBackpressure(p cli.JobParams) (*weir.Graph, error) {
	return backpressure.Build(backpressure.Config{Records: p.Records, Parallelism: p.Parallelism, SleepMs: p.SleepMs, Out: p.Out})
}
