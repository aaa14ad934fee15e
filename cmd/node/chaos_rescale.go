package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/samples/keycount"
)

// chaosRescaleConfig is one `node chaos rescale` invocation's settings.
type chaosRescaleConfig struct {
	Records     int64
	Keys        int
	SleepMs     float64
	Steps       int           // rescales per run
	MaxP        int           // highest parallelism a step may choose
	Gap         time.Duration // mean time between steps
	KillEvery   time.Duration
	Interval    time.Duration // checkpoint interval
	Incremental bool          // write changed key groups as deltas
	Parallelism int           // of source and count at the start
	// StagingSink runs keycount into a per-instance two-phase sink that
	// hands its staged output off (keycount.CommitLog), at Parallelism
	// instances, and rescales it too in every step.
	StagingSink bool
	// RunTimeout bounds one run: past it the job's actors are dumped to
	// Diag and the run stopped and counted as failed.
	RunTimeout time.Duration
	// Log, if not nil, receives the job's log (--log-level).
	Log *zerolog.Logger
	// Diag receives the dump of a run that timed out.
	Diag io.Writer
}

// chaosRescaleResult is one run of `node chaos rescale`, as --json prints it.
type chaosRescaleResult struct {
	Seed     int64  `json:"seed"`
	Mode     string `json:"mode"`
	Sink     string `json:"sink"`
	Schedule string `json:"schedule"`
	OK       bool   `json:"exactly_once"`
	Error    string `json:"error,omitempty"`
	Kills    int    `json:"kills"`
	Restarts int    `json:"restarts"`
	// Committed, Aborted (a failure during the rescale restarted the job),
	// Refused (asked while a region restarted or the job was ending),
	// Unchanged (a step before it aborted, so every operator already ran at
	// the parallelism asked for) and NotRun (the job ended before the step's
	// time) count the steps.
	Committed int     `json:"committed"`
	Aborted   int     `json:"aborted"`
	Refused   int     `json:"refused"`
	Unchanged int     `json:"unchanged"`
	NotRun    int     `json:"not_run"`
	DurationS float64 `json:"duration_s"`
}

// runChaosRescale runs keycount under random actor kills and a random
// schedule of live rescales, for several seeds in each mode, and verifies
// every run's committed output is exactly once and in order (with
// --staging-sink, whose sink is rescaled too: exactly once, in any order,
// as a restore at another sink parallelism replays channel state).
func runChaosRescale(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("node chaos rescale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c chaosRescaleConfig
	fs.Int64Var(&c.Records, "records", 150000, "input records")
	fs.IntVar(&c.Keys, "keys", 100, "distinct keys")
	fs.Float64Var(&c.SleepMs, "sleep-ms", 0.02, "average sleep per record in the count stage")
	fs.IntVar(&c.Steps, "rescales", 3, "live rescales of count per run")
	fs.BoolVar(&c.StagingSink, "staging-sink", false, "write to a per-instance two-phase sink that hands its staged output off, and rescale it too in every step (up and down), instead of the file sink (one instance)")
	fs.IntVar(&c.MaxP, "max-parallelism", 4, "highest parallelism a rescale may choose (≥ 2)")
	fs.DurationVar(&c.Gap, "rescale-every", 250*time.Millisecond, "mean time between rescales (each waits in [½, 1½) of it)")
	fs.DurationVar(&c.KillEvery, "kill-every", 300*time.Millisecond, "kill a random actor this often")
	fs.DurationVar(&c.Interval, "checkpoint-interval", 50*time.Millisecond, "checkpoint interval")
	fs.BoolVar(&c.Incremental, "checkpoint-incremental", true, "write key groups as deltas of their changed keys (false: every key group whole at every checkpoint)")
	fs.DurationVar(&c.RunTimeout, "run-timeout", 90*time.Second, "stop a run that has not finished after this long, dump its actors to stderr and count it as failed")
	logLevel := fs.String("log-level", "", "write the job's log at this level (debug, info, warn) to stderr; none by default")
	c.Parallelism = 2
	runs := fs.Int("runs", 20, "runs, alternating between the modes")
	firstSeed := fs.Int64("seed", 1, "first seed (each run prints the command that replays it)")
	modes := fs.String("modes", "aligned,unaligned", "comma-separated checkpoint modes")
	asJSON := fs.Bool("json", false, "print one JSON object per run")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 || *runs < 1 || c.KillEvery <= 0 || c.Records < 1 || c.Steps < 1 || c.MaxP < 2 || c.Gap <= 0 || c.Keys < 1 {
		fmt.Fprintln(stderr, "node chaos rescale: needs --runs ≥ 1, --records ≥ 1, --keys ≥ 1, --rescales ≥ 1, --max-parallelism ≥ 2, --kill-every > 0, --rescale-every > 0 and no extra arguments")
		return cli.ExitUsage
	}
	if *logLevel != "" {
		lvl, err := zerolog.ParseLevel(*logLevel)
		if err != nil {
			fmt.Fprintf(stderr, "node chaos rescale: --log-level: %v\n", err)
			return cli.ExitUsage
		}
		l := zerolog.New(stderr).Level(lvl).With().Timestamp().Logger()
		c.Log = &l
	}
	c.Diag = stderr
	ms, err := chaosModes(*modes)
	if err != nil {
		fmt.Fprintf(stderr, "node chaos rescale: --modes: %v\n", err)
		return cli.ExitUsage
	}
	failed, committed, aborted := 0, 0, 0
	for i := 0; i < *runs; i++ {
		seed, mode := *firstSeed+int64(i), ms[i%len(ms)]
		r := chaosRescaleRun(ctx, seed, mode, c)
		committed, aborted = committed+r.Committed, aborted+r.Aborted
		replay := fmt.Sprintf("node chaos rescale --seed %d --runs 1 --modes %s --records %d --keys %d --sleep-ms %v --rescales %d --max-parallelism %d --rescale-every %v --kill-every %v --checkpoint-interval %v --checkpoint-incremental=%v",
			seed, mode, c.Records, c.Keys, c.SleepMs, c.Steps, c.MaxP, c.Gap, c.KillEvery, c.Interval, c.Incremental)
		if c.StagingSink {
			replay += " --staging-sink"
		}
		if !r.OK {
			failed++
		}
		if *asJSON {
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		status := "exactly once"
		if !r.OK {
			status = "FAILED: " + r.Error
		}
		fmt.Fprintf(stdout, "seed %d %-9s rescales %-34s committed %d aborted %d refused %d unchanged %d not run %d  kills %3d restarts %3d  %5.1f s  %s\n  replay: %s\n",
			seed, mode, r.Schedule, r.Committed, r.Aborted, r.Refused, r.Unchanged, r.NotRun, r.Kills, r.Restarts, r.DurationS, status, replay)
	}
	what := "chaos rescale"
	if c.StagingSink {
		what += " (a staging sink rescaled too)"
	}
	fmt.Fprintf(stderr, "%s: %d of %d runs exactly once; %d rescales committed, %d aborted by a failure\n", what, *runs-failed, *runs, committed, aborted)
	if failed > 0 {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// chaosModes parses a comma-separated list of checkpoint modes (not none).
func chaosModes(list string) ([]weir.CheckpointMode, error) {
	var ms []weir.CheckpointMode
	for _, m := range strings.Split(list, ",") {
		mode, err := weir.ParseCheckpointMode(strings.TrimSpace(m))
		if err != nil || mode == weir.CheckpointNone {
			return nil, fmt.Errorf("%q must be aligned or unaligned", m)
		}
		ms = append(ms, mode)
	}
	return ms, nil
}

// chaosRescaleRun runs and verifies one seed in one mode: the seed draws the
// rescale schedule and the actors chaos kills.
func chaosRescaleRun(ctx context.Context, seed int64, mode weir.CheckpointMode, c chaosRescaleConfig) chaosRescaleResult {
	steps := chaosRescaleSchedule(seed, c.Parallelism, c.MaxP, c.Steps, c.Gap, c.StagingSink)
	r := chaosRescaleResult{Seed: seed, Mode: string(mode), Sink: "file", Schedule: formatRescaleSchedule(steps)}
	dir, err := os.MkdirTemp("", "weir-chaos-rescale-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.jsonl")
	kc := keycount.Config{Records: c.Records, Keys: c.Keys, Parallelism: c.Parallelism, Out: out, SleepMs: c.SleepMs}
	var staged *keycount.CommitLog
	if c.StagingSink {
		staged, r.Sink = keycount.NewCommitLog(), "staging"
		kc.Sink = staged.Sink()
	}
	g, err := keycount.Build(kc)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts, sup.RestartWindow = 100000, time.Minute
	sup.ChaosKillEvery, sup.ChaosSeed = c.KillEvery, seed
	log := zerolog.Nop()
	if c.Log != nil {
		log = c.Log.With().Int64("seed", seed).Logger()
	}
	ctx, timedOut := chaosWatchdog(ctx, c.RunTimeout, c.Diag)
	defer timedOut()
	res, err := weir.Run(ctx, g, weir.WithLogger(log), weir.WithSupervision(sup),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: mode, Interval: c.Interval, Timeout: 30 * time.Second, Retain: 2, StateDir: filepath.Join(dir, "state"), FullCheckpoints: !c.Incremental}),
		weir.WithRescaleSchedule(steps...))
	if res != nil {
		r.Kills, r.Restarts, r.DurationS = res.Kills, res.Restarts, res.Duration.Seconds()
	}
	if timedOut() {
		r.Error = fmt.Sprintf("the run did not finish within %v (its actors' state is on stderr)", c.RunTimeout)
		return r
	}
	if res != nil {
		if bad := r.countSteps(res.Rescales); bad != "" {
			r.Error = bad
			return r
		}
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	verify := func() error { return keycount.VerifyFile(out, c.Records, c.Keys) }
	if staged != nil {
		verify = func() error { return staged.Verify(c.Records, c.Keys) }
	}
	if err := verify(); err != nil {
		r.Error = err.Error()
		return r
	}
	r.OK = true
	return r
}

// countSteps sorts each scheduled step by its outcome; it returns the first
// outcome that is none of the expected ones (committed, aborted by a
// failure, refused while a region restarts or the job ends, nothing to
// change after an earlier step aborted, not run because the job had ended),
// or "".
func (r *chaosRescaleResult) countSteps(stats []weir.RescaleStat) string {
	for _, st := range stats {
		switch e := st.Err; {
		case e == "":
			r.Committed++
		case strings.Contains(e, "aborted"):
			r.Aborted++
		case strings.Contains(e, "a region of the job is restarting"), strings.Contains(e, "the job is ending"), strings.Contains(e, "input has ended"):
			r.Refused++
		case e == "the job ended first":
			r.NotRun++
		case strings.Contains(e, "changes nothing"):
			r.Unchanged++ // a step before it aborted: count still runs at this parallelism
		default:
			return fmt.Sprintf("rescale step %d (%s): %s", st.Step, st.Changes, e)
		}
	}
	return ""
}

// chaosWatchdog returns a context that ends once limit has passed (limit ≤
// 0: never), after it has written the state of every job's actors to diag,
// and a function that stops the watchdog and reports whether it fired.
func chaosWatchdog(parent context.Context, limit time.Duration, diag io.Writer) (context.Context, func() bool) {
	ctx, cancel := context.WithCancel(parent)
	if limit <= 0 {
		return ctx, func() bool { cancel(); return false }
	}
	fired := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(limit)
		defer t.Stop()
		select {
		case <-t.C:
			dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
			dumps := weir.DumpJobs(dctx)
			dcancel()
			if diag != nil {
				b, _ := json.Marshal(dumps)
				fmt.Fprintf(diag, "run past %v, state of its actors: %s\n", limit, b)
			}
			close(fired)
			cancel()
		case <-stop:
		}
	}()
	var once bool
	return ctx, func() bool {
		if !once {
			once = true
			select {
			case <-fired:
			default:
				close(stop)
			}
			<-done
			cancel()
		}
		select {
		case <-fired:
			return true
		default:
			return false
		}
	}
}
