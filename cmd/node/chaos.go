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

// registerChaos adds `node chaos keycount`, `node chaos cluster`, `node
// chaos metamorphic` and `node chaos rescale`.
func registerChaos() {
	cli.RegisterCommand("chaos", "keycount|cluster|metamorphic|rescale [flags]",
		"keycount: run keycount under random actor kills for several seeds and modes; cluster: SIGKILL a node of a 3-node cluster running keycount, for several seeds; verify exactly-once output each time. metamorphic: run keycount and keysum in every checkpoint mode, parallelism and disturbance and demand the same output. rescale: keycount under random actor kills and a seeded random schedule of live rescales, verified exactly once per run", runChaos)
}

// chaosResult is one chaos run, as `node chaos --json` prints it.
type chaosResult struct {
	Seed          int64   `json:"seed"`
	Mode          string  `json:"mode"`
	OK            bool    `json:"exactly_once"`
	Error         string  `json:"error,omitempty"`
	Kills         int     `json:"kills"`
	MaxInFlight   int64   `json:"max_checkpoints_in_flight"`
	Restarts      int     `json:"restarts"`
	RecordsPerS   float64 `json:"records_per_s"`
	RecoveryMsP50 float64 `json:"recovery_ms_p50"`
	RecoveryMsP95 float64 `json:"recovery_ms_p95"`
	RecoveryMsMax float64 `json:"recovery_ms_max"`
	DurationS     float64 `json:"duration_s"`
	// Channel state over the run's completed checkpoints: bytes written,
	// and bytes referred to in earlier checkpoints' blobs.
	InflightBytes    int64 `json:"inflight_bytes"`
	InflightRefBytes int64 `json:"inflight_ref_bytes"`
}

// runChaos runs keycount under chaos for each seed and mode and verifies it.
func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "cluster" {
		return runChaosCluster(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "metamorphic" {
		return runMetamorphic(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rescale" {
		return runChaosRescale(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "keycount" {
		fmt.Fprintf(stderr, "node chaos: want keycount, cluster, metamorphic or rescale (got %q)\n", strings.Join(args, " "))
		return cli.ExitUsage
	}
	fs := flag.NewFlagSet("node chaos keycount", flag.ContinueOnError)
	fs.SetOutput(stderr)
	records := fs.Int64("records", 500000, "input records")
	keys := fs.Int("keys", 1000, "distinct keys")
	parallelism := fs.Int("parallelism", 2, "parallelism of source and count")
	seeds := fs.Int("seeds", 3, "number of seeds per mode")
	firstSeed := fs.Int64("seed", 1, "first seed (a failed run prints the seed that replays it)")
	modes := fs.String("modes", "aligned,unaligned", "comma-separated checkpoint modes")
	every := fs.Duration("kill-every", 200*time.Millisecond, "kill a random actor this often")
	interval := fs.Duration("checkpoint-interval", 50*time.Millisecond, "checkpoint interval")
	sleepMs := fs.Float64("sleep-ms", 0, "average sleep per record in the count stage")
	maxConcurrent := fs.Int("max-concurrent-checkpoints", 1, "checkpoints in flight at once (1 to 16)")
	maxInflight := fs.Int64("max-inflight-bytes", 0, "per task size limit of what a checkpoint holds back or stores, in bytes (0: none)")
	incremental := fs.Bool("checkpoint-incremental", true, "write key groups as deltas of their changed keys (false: every key group whole at every checkpoint)")
	asJSON := fs.Bool("json", false, "print one JSON object per run")
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 || *seeds < 1 || *every <= 0 || *records < 1 || *maxConcurrent < 1 || *maxConcurrent > 16 || *maxInflight < 0 {
		fmt.Fprintln(stderr, "node chaos keycount: needs --seeds ≥ 1, --kill-every > 0, --records ≥ 1, --max-concurrent-checkpoints 1 to 16, --max-inflight-bytes ≥ 0 and no extra arguments")
		return cli.ExitUsage
	}
	var ms []weir.CheckpointMode
	for _, m := range strings.Split(*modes, ",") {
		mode, err := weir.ParseCheckpointMode(strings.TrimSpace(m))
		if err != nil || mode == weir.CheckpointNone {
			fmt.Fprintf(stderr, "node chaos keycount: --modes: %q must be aligned or unaligned\n", m)
			return cli.ExitUsage
		}
		ms = append(ms, mode)
	}
	failed := 0
	for _, mode := range ms {
		for s := int64(0); s < int64(*seeds); s++ {
			seed := *firstSeed + s
			r := chaosRun(ctx, seed, mode, *records, *keys, *parallelism, *every, *interval, *sleepMs, checkpointLimits{*maxConcurrent, *maxInflight, *incremental})
			if !r.OK {
				failed++
			}
			if *asJSON {
				b, _ := json.Marshal(r)
				fmt.Fprintln(stdout, string(b))
			} else {
				status := "exactly once"
				if !r.OK {
					status = "FAILED: " + r.Error + fmt.Sprintf(" (replay: node chaos keycount --seed %d --seeds 1 --modes %s --records %d --keys %d --kill-every %v --max-concurrent-checkpoints %d --max-inflight-bytes %d --checkpoint-incremental=%v)", seed, mode, *records, *keys, *every, *maxConcurrent, *maxInflight, *incremental)
				}
				fmt.Fprintf(stdout, "seed %d %-9s kills %3d restarts %3d in flight ≤ %d recovery p50 %6.1f ms p95 %6.1f ms max %6.1f ms  %8.0f records/s  %s\n",
					seed, mode, r.Kills, r.Restarts, r.MaxInFlight, r.RecoveryMsP50, r.RecoveryMsP95, r.RecoveryMsMax, r.RecordsPerS, status)
			}
		}
	}
	total := len(ms) * *seeds
	fmt.Fprintf(stderr, "chaos: %d of %d runs exactly once\n", total-failed, total)
	if failed > 0 {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// chaosRun runs and verifies one seed in one mode.
// checkpointLimits are the checkpoint flags a chaos run passes on.
type checkpointLimits struct {
	maxConcurrent    int
	maxInflightBytes int64
	incremental      bool
}

func chaosRun(ctx context.Context, seed int64, mode weir.CheckpointMode, n int64, k, p int, every, interval time.Duration, sleepMs float64, lim checkpointLimits) chaosResult {
	r := chaosResult{Seed: seed, Mode: string(mode)}
	dir, err := os.MkdirTemp("", "weir-chaos-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.jsonl")
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: p, Out: out, SleepMs: sleepMs})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts, sup.RestartWindow = 100000, time.Minute
	sup.ChaosKillEvery, sup.ChaosSeed = every, seed
	res, err := weir.Run(ctx, g, weir.WithLogger(zerolog.Nop()), weir.WithSupervision(sup),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: mode, Interval: interval, MaxConcurrent: lim.maxConcurrent, MaxInflightBytes: lim.maxInflightBytes, StateDir: filepath.Join(dir, "state"),
			FullCheckpoints: !lim.incremental}))
	if res != nil {
		// Effective throughput: the job's records over wall time (records
		// re-read after a rewind do not count twice).
		r.Kills, r.Restarts, r.DurationS = res.Kills, res.Restarts, res.Duration.Seconds()
		r.MaxInFlight = res.MaxCheckpointsInFlight
		for _, c := range res.Checkpoints {
			r.InflightBytes += c.InflightBytes
			r.InflightRefBytes += c.InflightRefBytes
		}
		if r.DurationS > 0 {
			r.RecordsPerS = float64(n) / r.DurationS
		}
		var rec []float64
		for _, d := range res.Recovery {
			rec = append(rec, float64(d)/float64(time.Millisecond))
		}
		r.RecoveryMsP50, r.RecoveryMsP95, r.RecoveryMsMax = weir.Quantile(rec, 0.5), weir.Quantile(rec, 0.95), weir.Quantile(rec, 1)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if err := keycount.VerifyFile(out, n, k); err != nil {
		r.Error = err.Error()
		return r
	}
	r.OK = true
	return r
}
