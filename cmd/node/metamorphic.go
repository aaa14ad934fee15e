package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/samples/keysum"
)

// metaConfig is what `node chaos metamorphic` runs.
type metaConfig struct {
	Exe     string // the node binary
	Seed    int64
	Records int64
	Keys    int // a multiple of every parallelism
	// IncrKeys are the distinct keys of the cells with incremental
	// checkpoints: so many that the keys a checkpoint interval changes are
	// a small share of each key group, which is then written as a delta
	// (over half of it changed, a group is written whole again).
	IncrKeys  int
	SleepMs   float64       // per record at parallelism 1; a cell at p sleeps p times this, so every cell lasts about as long
	Interval  time.Duration // checkpoint interval
	KillEvery time.Duration // of the actor-kills cells
	Timeout   time.Duration // of one `node run`
}

// defaultMeta sizes a cell to about 2 s of sleep in the keyed stage at every
// parallelism: long enough for the checkpoints a process kill waits for.
func defaultMeta() metaConfig {
	return metaConfig{Seed: 1, Records: 80000, Keys: 40, IncrKeys: 40000, SleepMs: 0.025, Interval: 50 * time.Millisecond,
		KillEvery: 150 * time.Millisecond, Timeout: 90 * time.Second}
}

// metaResult is one cell's outcome.
type metaResult struct {
	Cell      metaCell
	Seed      int64
	Skipped   string // why the cell does not apply
	Same      bool   // committed output identical to the reference's
	Disturbed string // what happened to the run (kill, restore)
	Lines     int
	Error     string // how it differs, or why it did not run
	Took      time.Duration
}

// line is the cell's one-line report.
func (r metaResult) line(cfg metaConfig) string {
	name := fmt.Sprintf("%-48s", r.Cell)
	if r.Skipped != "" {
		return fmt.Sprintf("%s skipped: %s", name, r.Skipped)
	}
	what := ""
	if r.Disturbed != "" {
		what = r.Disturbed + "; "
	}
	status := "identical"
	if !r.Same {
		status = fmt.Sprintf("DIFFERENT: %s (replay: node chaos metamorphic --seed %d --cells %s%s)", r.Error, cfg.Seed, r.Cell, cfg.flags())
	}
	return fmt.Sprintf("%s seed %-20d %s%d lines, %.1f s: %s", name, r.Seed, what, r.Lines, r.Took.Seconds(), status)
}

// flags are the replay flags that differ from the defaults.
func (cfg metaConfig) flags() string {
	d := defaultMeta()
	return replayFlags([]replayFlag{
		{"records", cfg.Records, d.Records}, {"keys", cfg.Keys, d.Keys}, {"incremental-keys", cfg.IncrKeys, d.IncrKeys}, {"sleep-ms", cfg.SleepMs, d.SleepMs},
		{"checkpoint-interval", cfg.Interval, d.Interval}, {"kill-every", cfg.KillEvery, d.KillEvery},
	})
}

// runMetamorphic is `node chaos metamorphic`.
func runMetamorphic(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := defaultMeta()
	fs := flag.NewFlagSet("node chaos metamorphic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the cells' random choices (a differing cell prints it)")
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "input records of every run")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys (a multiple of 4)")
	fs.IntVar(&cfg.IncrKeys, "incremental-keys", cfg.IncrKeys, "distinct keys of the cells with incremental checkpoints (a multiple of 4)")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", cfg.SleepMs, "average sleep per record in the keyed stage at parallelism 1 (times the parallelism in other cells, so that all last about as long)")
	fs.DurationVar(&cfg.Interval, "checkpoint-interval", cfg.Interval, "checkpoint interval")
	fs.DurationVar(&cfg.KillEvery, "kill-every", cfg.KillEvery, "actor-kills cells: kill a random actor this often")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "longest one node run may take")
	jobs := fs.String("jobs", strings.Join(metaJobs, ","), "comma-separated jobs")
	only := fs.String("cells", "", "comma-separated cells (JOB/MODE/pN/DISTURBANCE) instead of all")
	sample := fs.Bool("sample", false, "one cell per job and disturbance, drawn from --seed, instead of all")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	cells, err := metaSelect(cfg, fs.NArg(), *jobs, *only, *sample)
	if err != nil {
		fmt.Fprintf(stderr, "node chaos metamorphic: %v\n", err)
		return cli.ExitUsage
	}
	if cfg.Exe, err = os.Executable(); err != nil {
		fmt.Fprintf(stderr, "node chaos metamorphic: %v\n", err)
		return cli.ExitFailure
	}
	results := runMetaCells(ctx, cfg, cells, func(r metaResult) { fmt.Fprintln(stdout, r.line(cfg)) })
	fmt.Fprintln(stdout, metaSummary(cfg, results))
	for _, r := range results {
		if r.Skipped == "" && !r.Same {
			return cli.ExitFailure
		}
	}
	return cli.ExitOK
}

// metaSelect checks the flags and returns the cells to run.
func metaSelect(cfg metaConfig, extra int, jobs, only string, sample bool) ([]metaCell, error) {
	switch {
	case extra > 0:
		return nil, errors.New("no arguments expected")
	case cfg.Keys < 4 || cfg.Keys%4 != 0 || cfg.Records < 1 || cfg.Records%int64(cfg.Keys) != 0:
		return nil, fmt.Errorf("--keys %d must be a positive multiple of 4 and --records %d a positive multiple of it", cfg.Keys, cfg.Records)
	case cfg.IncrKeys < 4 || cfg.IncrKeys%4 != 0 || cfg.Records%int64(cfg.IncrKeys) != 0:
		return nil, fmt.Errorf("--incremental-keys %d must be a positive multiple of 4 and --records %d a multiple of it", cfg.IncrKeys, cfg.Records)
	case cfg.SleepMs < 0 || cfg.Interval <= 0 || cfg.KillEvery <= 0 || cfg.Timeout <= 0:
		return nil, errors.New("--sleep-ms must be ≥ 0; --checkpoint-interval, --kill-every and --timeout > 0")
	case only != "" && sample:
		return nil, errors.New("--cells and --sample exclude each other")
	}
	var js []string
	for _, j := range strings.Split(jobs, ",") {
		j = strings.TrimSpace(j)
		if j != "keycount" && j != "keysum" {
			return nil, fmt.Errorf("--jobs: %q is not one of %v", j, metaJobs)
		}
		js = append(js, j)
	}
	if only != "" {
		var cells []metaCell
		for _, s := range strings.Split(only, ",") {
			c, err := parseMetaCell(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("--cells: %w", err)
			}
			cells = append(cells, c)
		}
		return cells, nil
	}
	if sample {
		return sampleMetaCells(cfg.Seed, js), nil
	}
	return allMetaCells(js), nil
}

// metaSummary is the closing line: how many cells ran and were identical.
func metaSummary(cfg metaConfig, results []metaResult) string {
	ran, same, skipped := 0, 0, 0
	for _, r := range results {
		switch {
		case r.Skipped != "":
			skipped++
		case r.Same:
			ran++
			same++
		default:
			ran++
		}
	}
	return fmt.Sprintf("metamorphic: %d of %d cells identical to their job's reference (%d skipped: %s; seed %d)",
		same, ran, skipped, metaSkipNoneCause, cfg.Seed)
}

// errEndedFirst is a process-kill cell's job ending before it had the
// checkpoints the kill waits for.
var errEndedFirst = errors.New("node run ended before the kill")

// longerTries is how often a process-kill cell whose job ended before the
// kill runs again with twice the records. Aligned checkpoints under
// backpressure take about as long as the queued records need, so only more
// records (not a longer sleep) give a job more checkpoints before its end.
const longerTries = 2

// runMetaCells runs the cells and reports each result as it comes. Each is
// compared with its job's reference cell at the same records, run once when
// first needed.
func runMetaCells(ctx context.Context, cfg metaConfig, cells []metaCell, report func(metaResult)) []metaResult {
	type refKey struct {
		job     string
		records int64
		keys    int
	}
	refs := map[refKey]canonicalOutput{}
	refErr := map[refKey]error{}
	reference := func(c metaCell, records int64, keys int) (canonicalOutput, error) {
		k := refKey{c.Job, records, keys}
		if _, ok := refs[k]; !ok && refErr[k] == nil {
			ref := c.reference()
			out, _, err := runMetaCell(ctx, cfg, ref, cellSeed(cfg.Seed, ref), records, keys)
			if err != nil {
				refErr[k] = fmt.Errorf("reference %s with %d records and %d keys: %w", ref, records, keys, err)
			}
			refs[k] = out
		}
		return refs[k], refErr[k]
	}
	var results []metaResult
	for _, c := range cells {
		r := metaResult{Cell: c, Seed: cellSeed(cfg.Seed, c), Skipped: c.skip()}
		if r.Skipped != "" {
			report(r)
			results = append(results, r)
			continue
		}
		if ctx.Err() != nil {
			break
		}
		records, keys := cfg.Records, cfg.keysOf(c)
		var out canonicalOutput
		var err error
		start := time.Now()
		for try := 0; ; try++ {
			out, r.Disturbed, err = runMetaCell(ctx, cfg, c, r.Seed, records, keys)
			if !errors.Is(err, errEndedFirst) || try == longerTries {
				break
			}
			records *= 2
		}
		r.Took, r.Lines = time.Since(start), out.Lines
		if records != cfg.Records {
			r.Disturbed += fmt.Sprintf(" (with %d records: shorter jobs ended before the kill)", records)
		}
		ref, rerr := reference(c, records, keys)
		switch {
		case err != nil:
			r.Error = err.Error()
		case rerr != nil:
			r.Error = rerr.Error()
		default:
			r.Error = ref.diff(out)
			r.Same = r.Error == ""
			if !r.Same {
				if verr := verifyMetaOutput(c.Job, records, keys, out); verr != nil {
					r.Error += "; verifier: " + verr.Error()
				}
			}
		}
		report(r)
		results = append(results, r)
	}
	return results
}

// keysOf is the distinct keys of cell c's job.
func (cfg metaConfig) keysOf(c metaCell) int {
	if c.incremental() {
		return cfg.IncrKeys
	}
	return cfg.Keys
}

// verifyMetaOutput runs the job's own exactly-once verifier on an output.
func verifyMetaOutput(job string, records int64, distinct int, out canonicalOutput) error {
	var b bytes.Buffer
	keys := make([]string, 0, len(out.Keys))
	for k := range out.Keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, l := range out.Keys[k] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if job == "keysum" {
		return keysum.Verify(&b, records, distinct)
	}
	return keycount.Verify(&b, records, distinct)
}

// runMetaCell runs one cell with `node run` processes on records over keys
// and returns its committed output and what disturbed it.
func runMetaCell(ctx context.Context, cfg metaConfig, c metaCell, seed, records int64, keys int) (canonicalOutput, string, error) {
	dir, err := os.MkdirTemp("", "weir-metamorphic-")
	if err != nil {
		return canonicalOutput{}, "", err
	}
	defer os.RemoveAll(dir)
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	args := []string{"run", c.Job, "--records", fmt.Sprint(records), "--keys", fmt.Sprint(keys),
		"--parallelism", fmt.Sprint(c.P), "--sleep-ms", fmt.Sprint(cfg.SleepMs * float64(c.P)), "--out", out, "--state-dir", stateDir,
		"--checkpoint-interval", cfg.Interval.String(), "--retain", "20", "--log-level", "warn"}
	args = append(args, metaModeArgs[c.Mode]...)
	var disturbed string
	switch c.Chaos {
	case "no-chaos":
		err = runNodeProc(ctx, cfg, args)
	case "actor-kills":
		err = runNodeProc(ctx, cfg, append(args, "--chaos-kill-every", cfg.KillEvery.String(), "--chaos-seed", fmt.Sprint(seed),
			"--max-restarts", "10000", "--restart-window", "1m"))
		disturbed = fmt.Sprintf("actor kills every %v", cfg.KillEvery)
	default:
		disturbed, err = killAndRestore(ctx, cfg, c, seed, args, filepath.Join(stateDir, c.Job))
	}
	if err != nil {
		return canonicalOutput{}, disturbed, err
	}
	f, err := os.Open(out)
	if err != nil {
		return canonicalOutput{}, disturbed, err
	}
	defer f.Close()
	co, err := canonicalise(f)
	return co, disturbed, err
}

// runNodeProc runs the node binary to its end; a failure carries the end of
// its stderr.
func runNodeProc(ctx context.Context, cfg metaConfig, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Exe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("node %s %s did not end within %v and was killed (hung?): %s", args[0], args[1], cfg.Timeout, lastBytes(stderr.String(), 1500))
	}
	if err != nil {
		return fmt.Errorf("node %s %s: %w: %s", args[0], args[1], err, lastBytes(stderr.String(), 1500))
	}
	return nil
}

// killAndRestore starts `node run`, SIGKILLs it once it has completed a
// seeded number of checkpoints, and runs it again with --restore latest or
// an older retained checkpoint. It says what it did.
func killAndRestore(ctx context.Context, cfg metaConfig, c metaCell, seed int64, args []string, jobState string) (string, error) {
	rng := rand.New(rand.NewSource(seed))
	older := c.Chaos == "kill-restore-older"
	want := 1 + rng.Intn(2) // completed checkpoints before the kill
	if older {
		want++ // so that an older one than the newest is retained
	}
	first, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(first, cfg.Exe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start node run: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var ended bool
	var runErr error
	ready := func() bool {
		select {
		case runErr = <-exited:
			ended = true
			return true
		default:
		}
		return len(completedCheckpoints(jobState)) >= want
	}
	if !poll.Until(cfg.Timeout, 2*time.Millisecond, ready) {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		return "", fmt.Errorf("fewer than %d checkpoints within %v", want, cfg.Timeout)
	}
	if ended {
		if runErr != nil {
			return "", fmt.Errorf("node run ended before the kill: %w: %s", runErr, lastBytes(stderr.String(), 1500))
		}
		return "", fmt.Errorf("%w after %d checkpoints: with %d", errEndedFirst, want, len(completedCheckpoints(jobState)))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return "", fmt.Errorf("kill node run: %w", err)
	}
	<-exited
	ids := completedCheckpoints(jobState)
	if len(ids) == 0 {
		return "", errors.New("no completed checkpoint after the kill")
	}
	restore := "latest"
	if older {
		if len(ids) < 2 {
			return "", fmt.Errorf("only checkpoint %d retained after the kill: no older one to restore", ids[0])
		}
		restore = fmt.Sprint(ids[rng.Intn(len(ids)-1)])
	}
	what := fmt.Sprintf("SIGKILL with checkpoints %v, restore %s", ids, restore)
	return what, runNodeProc(ctx, cfg, append(args, "--restore", restore))
}

// completedCheckpoints are the ids of the job's checkpoints that have a
// manifest in a local store directory, oldest first.
func completedCheckpoints(jobState string) []uint64 {
	manifests, _ := filepath.Glob(filepath.Join(jobState, "chk-*", "_manifest"))
	var ids []uint64
	for _, m := range manifests {
		name := strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "chk-")
		if id, err := strconv.ParseUint(name, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
