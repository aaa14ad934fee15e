package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
)

// runFlags are the parsed flags of `node run`.
type runFlags struct {
	params JobParams
	// operators overrides --parallelism per operator.
	operators operatorParallelism
	// rescale is the schedule of live rescales.
	rescale  rescaleSchedule
	duration time.Duration
	drain    bool
	json     bool
	pretty   bool
	logLevel string

	batchSize       int
	channelCapacity int
	flushInterval   time.Duration

	checkpointMode     string
	checkpointInterval time.Duration
	checkpointTimeout  time.Duration
	alignedTimeout     time.Duration
	retain             int
	checkpointAsync    bool
	incremental        bool
	maxDeltas          int
	maxConcurrent      int
	maxInflightBytes   byteSize
	maxRestarts        int
	restartWindow      time.Duration
	chaosEvery         time.Duration
	chaosSeed          int64
	stateDir           string
	directIO           bool
	restore            string
	http               string // --http: serve the web page, JSON API and metrics here

	// set records which flags the command line gave explicitly.
	set map[string]bool
}

// Defaults of `node run` that are not taken from the root package.
const (
	defaultParallelism = 2
	defaultRecords     = 1_000_000
	defaultKeys        = 1000
	defaultValueBytes  = 256
	defaultSeed        = 1
)

// newRunFlagSet declares the flags of `node run` into f.
func newRunFlagSet(f *runFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("node run", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by the caller in one line
	fs.Usage = func() {}
	cp := weir.DefaultCheckpointConfig()

	fs.IntVar(&f.params.Parallelism, "parallelism", defaultParallelism, "instances of each operator")
	f.operators = operatorParallelism{}
	fs.Var(f.operators, "operator-parallelism", "instances of the named operators instead of --parallelism: `NAME=N[,NAME=N…]`, repeatable; on --restore a source not read by splits keeps its checkpoint's")
	fs.Var(&f.rescale, "rescale", "rescale operators live at times since the start: `TIME:NAME=N[,NAME=N][,TIME:NAME=N…]` (e.g. 2s:count=3,4s:count=1)")
	fs.Int64Var(&f.params.Records, "records", defaultRecords, "input records to generate (unbounded by default with --duration)")
	fs.IntVar(&f.params.Keys, "keys", defaultKeys, "distinct keys (keycount)")
	fs.IntVar(&f.params.ValueBytes, "value-bytes", defaultValueBytes, "bytes of keyed state per key (bigstate)")
	fs.StringVar(&f.params.Out, "out", "", "write output records as JSON lines to `FILE` (truncated first unless --restore)")
	fs.Float64Var(&f.params.SleepMs, "sleep-ms", 0, "average sleep per record in the job's slow stage, in `ms` (e.g. 0.01)")
	fs.Int64Var(&f.params.Seed, "seed", defaultSeed, "seed of generated data (wordcount)")
	fs.DurationVar(&f.duration, "duration", 0, "end the sources after this long and drain the job (e.g. 30s)")
	fs.BoolVar(&f.drain, "drain", false, "on SIGINT/SIGTERM end the sources and drain the job (final aligned checkpoint) instead of stopping at once with a stop checkpoint")
	fs.BoolVar(&f.json, "json", false, "print the final summary as one JSON object on stdout")
	fs.BoolVar(&f.pretty, "pretty", false, "human-readable logs on stderr (default: JSON logs)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.http, "http", "", "serve the web page at /, its JSON API at /api/ and Prometheus metrics at /metrics on `HOST:PORT` while the job runs (port 0: a free one, logged)")

	fs.IntVar(&f.batchSize, "batch-size", 0, "most records in one buffer")
	fs.IntVar(&f.channelCapacity, "channel-capacity", 0, "most buffers a channel holds")
	fs.DurationVar(&f.flushInterval, "flush-interval", 0, "seal a partly filled buffer after this long")

	fs.StringVar(&f.checkpointMode, "checkpoint-mode", string(cp.Mode), "checkpoint mode: none, aligned or unaligned")
	fs.DurationVar(&f.checkpointInterval, "checkpoint-interval", cp.Interval, "time between the end of one checkpoint and the next")
	fs.DurationVar(&f.checkpointTimeout, "checkpoint-timeout", cp.Timeout, "abort a checkpoint not complete after this long")
	fs.DurationVar(&f.alignedTimeout, "aligned-timeout", 0, "with --checkpoint-mode aligned: switch a checkpoint to unaligned after this long")
	fs.IntVar(&f.retain, "retain", cp.Retain, "completed checkpoints to keep")
	fs.BoolVar(&f.checkpointAsync, "checkpoint-async", !cp.SyncSnapshots, "take a copy-on-write view of keyed state at a barrier and encode it off the task (false: encode on the task at the barrier)")
	fs.BoolVar(&f.incremental, "checkpoint-incremental", !cp.FullCheckpoints, "write a key group that changed since the last checkpoint as a delta (its changed and deleted keys) on the sections already stored (false: write every key group whole at every checkpoint); needs --checkpoint-async, without which every checkpoint is written whole")
	fs.IntVar(&f.maxDeltas, "checkpoint-max-deltas", cp.IncrementalMaxDeltas, "with --checkpoint-incremental: a key group is due to be written whole again after this many deltas, also once its deltas overwrote more entries than half its live keys; at most 1/this of a task's groups are per checkpoint (0: 32)")
	fs.Var(&f.maxInflightBytes, "max-inflight-bytes", "per task: an aligned checkpoint holding back more than this at blocked inputs switches to unaligned; an overtaking barrier bringing more than this before the snapshot falls back to alignment on its input (e.g. 64MB; 0: no limit)")
	fs.IntVar(&f.maxConcurrent, "max-concurrent-checkpoints", cp.MaxConcurrent, "checkpoints in flight at once: the next may start before older ones are written; they complete in id order")
	sv := weir.DefaultSupervision()
	fs.IntVar(&f.maxRestarts, "max-restarts", sv.MaxRestarts, "region restarts allowed within --restart-window; one more fails the job (0: fail at the first failure)")
	fs.DurationVar(&f.restartWindow, "restart-window", sv.RestartWindow, "the window of --max-restarts")
	fs.DurationVar(&f.chaosEvery, "chaos-kill-every", 0, "kill a random task or channel actor (stop, poison or panic) this often")
	fs.Int64Var(&f.chaosSeed, "chaos-seed", 1, "seed of --chaos-kill-every's choices, to replay a chaos run")
	fs.StringVar(&f.stateDir, "state-dir", cp.StateDir, "directory of the checkpoint store")
	fs.BoolVar(&f.directIO, "checkpoint-direct-io", cp.DirectWrites, "write checkpoint blobs to --state-dir past the page cache (direct I/O, on Linux where the file system allows it): less CPU per checkpoint and no dirty pages to write back; a restore reads them from the disk")
	fs.StringVar(&f.restore, "restore", "", "resume from checkpoint `latest` (the newest that verifies) or an ID in --state-dir; newer checkpoints are deleted")
	describeRanges(fs)
	return fs
}

// finish checks each numeric flag against its range and the flags against
// each other, and fills implied values.
func (f *runFlags) finish() error {
	if err := f.checkRanges(); err != nil {
		return err
	}
	p := &f.params
	if f.duration > 0 && !f.set["records"] {
		p.Records = weir.Unbounded
	}
	if _, err := f.level(); err != nil {
		return err
	}
	mode, err := weir.ParseCheckpointMode(f.checkpointMode)
	if err != nil {
		return fmt.Errorf("--checkpoint-mode: %w", err)
	}
	switch {
	case f.maxInflightBytes > 0 && mode == weir.CheckpointNone:
		return fmt.Errorf("--max-inflight-bytes needs checkpoints: drop --checkpoint-mode none")
	case f.incremental && !f.checkpointAsync && f.set["checkpoint-incremental"]:
		return fmt.Errorf("--checkpoint-incremental needs --checkpoint-async")
	case f.alignedTimeout > 0 && mode != weir.CheckpointAligned:
		return fmt.Errorf("--aligned-timeout needs --checkpoint-mode aligned (got %s)", mode)
	case f.stateDir == "":
		return fmt.Errorf("--state-dir must not be empty")
	case f.directIO && mode == weir.CheckpointNone:
		return fmt.Errorf("--checkpoint-direct-io needs checkpoints: drop --checkpoint-mode none")
	case f.chaosEvery > 0 && mode == weir.CheckpointNone:
		return fmt.Errorf("--chaos-kill-every needs checkpoints to recover from: drop --checkpoint-mode none")
	case f.restore != "" && mode == weir.CheckpointNone:
		return fmt.Errorf("--restore needs checkpoints: drop --checkpoint-mode none")
	}
	if !f.checkpointAsync {
		f.incremental = false // incremental by default, but a synchronous snapshot is written whole
	}
	if f.restore != "" && f.restore != "latest" {
		if id, err := strconv.ParseUint(f.restore, 10, 64); err != nil || id == 0 {
			return fmt.Errorf("--restore %q: want latest or a checkpoint id (a positive number)", f.restore)
		}
	}
	return nil
}

// level parses --log-level.
func (f *runFlags) level() (zerolog.Level, error) {
	switch f.logLevel {
	case "debug":
		return zerolog.DebugLevel, nil
	case "info":
		return zerolog.InfoLevel, nil
	case "warn":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	}
	return zerolog.NoLevel, fmt.Errorf("--log-level %q: want debug, info, warn or error", f.logLevel)
}

// checkpointConfig is the checkpoint configuration the flags describe.
func (f *runFlags) checkpointConfig() weir.CheckpointConfig {
	return weir.CheckpointConfig{
		Mode:             weir.CheckpointMode(f.checkpointMode),
		Interval:         f.checkpointInterval,
		Timeout:          f.checkpointTimeout,
		AlignedTimeout:   f.alignedTimeout,
		Retain:           f.retain,
		MaxConcurrent:    f.maxConcurrent,
		MaxInflightBytes: int64(f.maxInflightBytes),
		StateDir:         f.stateDir,
		DirectWrites:     f.directIO,
		SyncSnapshots:    !f.checkpointAsync,
		FullCheckpoints:  !f.incremental,

		IncrementalMaxDeltas: f.maxDeltas,
	}
}

// supervisionConfig is the restart and chaos configuration the flags describe.
func (f *runFlags) supervisionConfig() weir.SupervisionConfig {
	s := weir.DefaultSupervision()
	s.MaxRestarts, s.RestartWindow = f.maxRestarts, f.restartWindow
	s.ChaosKillEvery, s.ChaosSeed = f.chaosEvery, f.chaosSeed
	return s
}

// runtimeOptions are the batching and flow-control options the flags describe.
func (f *runFlags) runtimeOptions() weir.RuntimeOptions {
	return weir.RuntimeOptions{BatchSize: f.batchSize, ChannelCapacity: f.channelCapacity, FlushInterval: f.flushInterval}
}

// parseInterleaved parses flags that may come before and after positional
// arguments (`node run --json keycount --records 5`) and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first non-flag or after "--"; a "--" just consumed
		// makes everything after it positional.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
