package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
)

// chaosClusterConfig is what `node chaos cluster` runs.
type chaosClusterConfig struct {
	Exe       string // the node binary the cluster runs
	Runs      int
	Seed      int64 // run i uses seed Seed+i
	Plan      clusterPlanConfig
	Records   int64
	Keys      int
	P         int
	Interval  time.Duration
	SleepMs   float64
	Slots     int
	Heartbeat time.Duration
	Timeout   time.Duration // of one job, from submit to its end
	// Incremental and MaxConcurrent are keycount's --checkpoint-incremental
	// and --max-concurrent-checkpoints.
	Incremental   bool
	MaxConcurrent int
}

// defaultChaosCluster is the soak of issue 16: keycount on three nodes of
// four slots each, one node killed between 1.5 and 5 s into the job.
func defaultChaosCluster() chaosClusterConfig {
	return chaosClusterConfig{Runs: 20, Seed: 1, Records: 400000, Keys: 400, P: 3, Interval: 200 * time.Millisecond,
		SleepMs: 0.05, Slots: 4, Heartbeat: 2 * time.Second, Timeout: 3 * time.Minute, Incremental: true, MaxConcurrent: 1,
		Plan: clusterPlanConfig{NATS: natsEither, KillMin: 1500 * time.Millisecond, KillMax: 5 * time.Second}}
}

// clusterRunResult is one run of the soak.
type clusterRunResult struct {
	Plan        clusterRunPlan
	Victim      string // "" when the job ended before the kill
	Coordinator bool   // the victim ran the job's coordinator
	KilledAt    time.Duration
	Took        time.Duration
	OK          bool
	Error       string
	Detail      string // the nodes' log tails of a failure
	// Checkpoints completed, and how many of them wrote deltas (with
	// incremental checkpoints), from the nodes' logs.
	Checkpoints, Deltas int
}

// line is the run's one-line report.
func (r clusterRunResult) line(cfg chaosClusterConfig) string {
	nats := "NATS in n1"
	if r.Plan.NATSApart {
		nats = "NATS apart"
	}
	kill := "job ended before the kill"
	if r.Victim != "" {
		role := "a worker"
		if r.Coordinator {
			role = "the coordinator"
		}
		again := "not restarted"
		if r.Plan.Restart {
			again = "restarted at once"
		}
		kill = fmt.Sprintf("killed %s (%s) at %.2f s, %s", r.Victim, role, r.KilledAt.Seconds(), again)
	}
	status := "exactly once"
	if cfg.Incremental {
		kill += fmt.Sprintf("; %d of %d checkpoints wrote deltas", r.Deltas, r.Checkpoints)
	}
	if !r.OK {
		status = fmt.Sprintf("FAILED: %s (replay: node chaos cluster --seed %d --runs 1 --nats %s%s)",
			r.Error, r.Plan.Seed, map[bool]string{false: natsInN1, true: natsApart}[r.Plan.NATSApart], cfg.jobFlags())
	}
	return fmt.Sprintf("seed %d  %s, coordinator asked of %s, %s; %.1f s: %s", r.Plan.Seed, nats, r.Plan.Coordinator, kill, r.Took.Seconds(), status)
}

// jobFlags are the replay flags that differ from the defaults.
func (cfg chaosClusterConfig) jobFlags() string {
	d := defaultChaosCluster()
	return replayFlags([]replayFlag{
		{"records", cfg.Records, d.Records}, {"keys", cfg.Keys, d.Keys}, {"parallelism", cfg.P, d.P},
		{"checkpoint-interval", cfg.Interval, d.Interval}, {"sleep-ms", cfg.SleepMs, d.SleepMs},
		{"kill-min", cfg.Plan.KillMin, d.Plan.KillMin}, {"kill-max", cfg.Plan.KillMax, d.Plan.KillMax},
		{"slots", cfg.Slots, d.Slots}, {"heartbeat-timeout", cfg.Heartbeat, d.Heartbeat},
		{"checkpoint-incremental", cfg.Incremental, d.Incremental}, {"max-concurrent-checkpoints", cfg.MaxConcurrent, d.MaxConcurrent},
	})
}

// replayFlag is a flag's value and its default, for a replay command.
type replayFlag struct {
	name       string
	value, def any
}

// replayFlags is " --name value" (" --name=value" for a bool) for each
// flag whose value is not its default.
func replayFlags(flags []replayFlag) string {
	var b strings.Builder
	for _, f := range flags {
		v := fmt.Sprint(f.value)
		switch {
		case v == fmt.Sprint(f.def):
		case isBool(f.value): // a bool flag takes its value after "="
			fmt.Fprintf(&b, " --%s=%s", f.name, v)
		default:
			fmt.Fprintf(&b, " --%s %s", f.name, v)
		}
	}
	return b.String()
}

// isBool reports whether v is a bool.
func isBool(v any) bool { _, ok := v.(bool); return ok }

// runChaosCluster is `node chaos cluster`.
func runChaosCluster(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := defaultChaosCluster()
	fs := flag.NewFlagSet("node chaos cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Runs, "runs", cfg.Runs, "runs, each on a new cluster")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the first run (run i uses seed+i; a failed run prints its seed)")
	fs.StringVar(&cfg.Plan.NATS, "nats", cfg.Plan.NATS, "where NATS runs: n1 (embedded in n1, never killed), apart (any node may be killed) or mixed (the seed picks)")
	fs.DurationVar(&cfg.Plan.KillMin, "kill-min", cfg.Plan.KillMin, "earliest kill, after the job is accepted")
	fs.DurationVar(&cfg.Plan.KillMax, "kill-max", cfg.Plan.KillMax, "latest kill, after the job is accepted")
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "keycount's input records")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "keycount's distinct keys")
	fs.IntVar(&cfg.P, "parallelism", cfg.P, "keycount's parallelism")
	fs.DurationVar(&cfg.Interval, "checkpoint-interval", cfg.Interval, "keycount's checkpoint interval")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", cfg.SleepMs, "keycount's average sleep per record in the count stage")
	fs.IntVar(&cfg.Slots, "slots", cfg.Slots, "each node's slots")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat-timeout", cfg.Heartbeat, "each node's heartbeat timeout")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "longest a run's job may take")
	fs.BoolVar(&cfg.Incremental, "checkpoint-incremental", cfg.Incremental, "keycount writes changed key groups as deltas on the sections already stored (false: every key group whole at every checkpoint)")
	fs.IntVar(&cfg.MaxConcurrent, "max-concurrent-checkpoints", cfg.MaxConcurrent, "keycount's checkpoints in flight at once")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if err := cfg.check(fs.NArg()); err != nil {
		fmt.Fprintf(stderr, "node chaos cluster: %v\n", err)
		return cli.ExitUsage
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "node chaos cluster: %v\n", err)
		return cli.ExitFailure
	}
	cfg.Exe = exe
	ok, coord := 0, 0
	for i := 0; i < cfg.Runs && ctx.Err() == nil; i++ {
		r := chaosClusterRun(ctx, cfg, planClusterRun(cfg.Seed+int64(i), cfg.Plan))
		fmt.Fprintln(stdout, r.line(cfg))
		if r.OK {
			ok++
		} else {
			fmt.Fprintln(stderr, r.Detail)
		}
		if r.Coordinator {
			coord++
		}
	}
	fmt.Fprintf(stdout, "chaos cluster: %d of %d runs exactly once (%d killed the coordinator's node; seeds %d…%d)\n",
		ok, cfg.Runs, coord, cfg.Seed, cfg.Seed+int64(cfg.Runs)-1)
	if ok < cfg.Runs {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// check reports a bad flag value.
func (cfg chaosClusterConfig) check(extra int) error {
	switch {
	case extra > 0:
		return errors.New("no arguments expected")
	case cfg.Runs < 1:
		return fmt.Errorf("--runs %d must be ≥ 1", cfg.Runs)
	case cfg.Records < 1 || cfg.Keys < 1 || cfg.Records%int64(cfg.Keys) != 0:
		return fmt.Errorf("--records %d must be a positive multiple of --keys %d (the verifier checks equal counts)", cfg.Records, cfg.Keys)
	case cfg.P < 1 || cfg.Slots < 1:
		return fmt.Errorf("--parallelism %d and --slots %d must be ≥ 1", cfg.P, cfg.Slots)
	case cfg.Interval <= 0 || cfg.Timeout <= 0 || cfg.SleepMs < 0:
		return errors.New("--checkpoint-interval and --timeout must be > 0, --sleep-ms ≥ 0")
	case cfg.MaxConcurrent < 1:
		return fmt.Errorf("--max-concurrent-checkpoints %d must be ≥ 1", cfg.MaxConcurrent)
	}
	return checkClusterPlanConfig(cfg.Plan)
}

// chaosClusterRun runs one seed's plan on a new cluster and verifies the
// output.
func chaosClusterRun(ctx context.Context, cfg chaosClusterConfig, plan clusterRunPlan) (r clusterRunResult) {
	r.Plan = plan
	start := time.Now()
	defer func() { r.Took = time.Since(start) }()
	dir, err := os.MkdirTemp("", "weir-chaos-cluster-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	nn, err := startNodeNet(netOptions{Exe: cfg.Exe, Dir: filepath.Join(dir, "nodes"), Nodes: clusterSize, Slots: cfg.Slots,
		Heartbeat: cfg.Heartbeat, LogLevel: "info", NATSApart: plan.NATSApart})
	if err != nil {
		r.Error = fmt.Sprintf("start the cluster: %v", err)
		return r
	}
	defer nn.stop()
	fail := func(format string, a ...any) clusterRunResult {
		r.Error = fmt.Sprintf(format, a...)
		r.Detail = fmt.Sprintf("seed %d: the nodes' logs:\n%s", plan.Seed, nn.logTails(3000))
		return r
	}
	out := filepath.Join(dir, "out.jsonl")
	job, err := startSubmit(ctx, nn, cfg.Timeout, cfg.submitArgs(out, plan.Coordinator)...)
	if err != nil {
		return fail("%v", err)
	}
	defer job.stop()
	if !poll.Until(60*time.Second, 10*time.Millisecond, job.accepted) {
		return fail("the job was not accepted within 60s; submit said:\n%s", job.out.String())
	}
	accepted := time.Now()
	if err := r.kill(nn, job, plan, accepted); err != nil {
		return fail("%v", err)
	}
	err = job.wait()
	r.Checkpoints, r.Deltas = nn.checkpointWrites()
	if err != nil {
		return fail("node submit: %v; it said:\n%s", err, lastBytes(job.out.String(), 3000))
	}
	if err := keycount.VerifyFile(out, cfg.Records, cfg.Keys); err != nil {
		return fail("output is not exactly once: %v", err)
	}
	r.OK = true
	return r
}

// submitArgs are `node submit`'s arguments for a run's keycount job.
func (cfg chaosClusterConfig) submitArgs(out, coordinator string) []string {
	args := []string{"keycount", "--records", fmt.Sprint(cfg.Records), "--keys", fmt.Sprint(cfg.Keys),
		"--parallelism", fmt.Sprint(cfg.P), "--checkpoint-interval", cfg.Interval.String(), "--sleep-ms", fmt.Sprint(cfg.SleepMs),
		"--max-concurrent-checkpoints", fmt.Sprint(cfg.MaxConcurrent), "--checkpoint-incremental=" + strconv.FormatBool(cfg.Incremental),
		"--out", out, "--coordinator", coordinator}
	return args
}

// kill waits until the plan's kill time, finds the victim in the status and
// SIGKILLs it, then restarts it if the plan says so. A job that ends first
// is not killed.
func (r *clusterRunResult) kill(nn *nodeNet, job *submitProc, plan clusterRunPlan, accepted time.Time) error {
	at := time.NewTimer(time.Until(accepted.Add(plan.KillAfter)))
	defer at.Stop()
	select {
	case <-job.done:
		return nil
	case <-at.C:
	}
	var victim string
	var coord bool
	found := func() bool {
		if job.ended() {
			return true
		}
		s, err := nn.status()
		if err != nil {
			return false
		}
		j, err := s.jobView("keycount")
		if err != nil {
			return false
		}
		victim, coord = plan.victim(j)
		return victim != ""
	}
	if !poll.Until(30*time.Second, 50*time.Millisecond, found) {
		return fmt.Errorf("no node to kill (coordinator: %v) in the status within 30s", plan.KillCoordinator)
	}
	if victim == "" { // the job ended first
		return nil
	}
	r.KilledAt = time.Since(accepted)
	if err := nn.kill(victim); err != nil {
		return err
	}
	r.Victim, r.Coordinator = victim, coord
	if plan.Restart {
		return nn.startNode(victim)
	}
	return nil
}

// submitProc is an attached `node submit` that follows its job to the end.
type submitProc struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // its exit, once done is closed
	cancel context.CancelFunc
}

// stop kills submit if it still runs and waits for it.
func (p *submitProc) stop() {
	p.cancel()
	<-p.done
}

// startSubmit starts `node submit ARGS` against the cluster; it is killed
// after timeout.
func startSubmit(ctx context.Context, nn *nodeNet, timeout time.Duration, args ...string) (*submitProc, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	p := &submitProc{out: &lockedBuffer{}, done: make(chan struct{}), cancel: cancel}
	p.cmd = exec.CommandContext(ctx, nn.opts.Exe, append(append([]string{"submit"}, args...), "--nats", nn.url)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start node submit: %w", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	return p, nil
}

// accepted reports whether the job was accepted (or submit ended).
func (p *submitProc) accepted() bool {
	return p.ended() || strings.Contains(p.out.String(), " accepted; coordinator")
}

// ended reports whether submit has exited.
func (p *submitProc) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for submit to exit and returns its error.
func (p *submitProc) wait() error {
	<-p.done
	return p.err
}
