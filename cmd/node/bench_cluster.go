package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/samples/keycount"
)

// clusterBenchConfig is what `node bench cluster` measures.
type clusterBenchConfig struct {
	Records     int64
	Keys        int
	Parallelism int
	Nodes       int
	Kills       int
	Heartbeat   time.Duration
	Grace       time.Duration // the nodes' --disconnect-grace
	SleepMs     float64
	Plot        string // SVG file of the kill trials' throughput (empty: none)
}

// clusterBenchResult is what it prints.
type clusterBenchResult struct {
	Records            int64   `json:"records"`
	OneProcessPerS     float64 `json:"one_process_records_per_s"`
	ClusterPerS        float64 `json:"cluster_records_per_s"`
	SubmitWallS        float64 `json:"submit_wall_s"`
	Ratio              float64 `json:"cluster_vs_one_process"`
	WireBytesPerRecord float64 `json:"wire_bytes_per_record"`
	WireMsgsPerRecord  float64 `json:"wire_msgs_per_record"`
	RawEventBytes      int     `json:"raw_event_bytes"`
	RawCountBytes      int     `json:"raw_count_bytes"`
	// SIGKILL → running again, of a node that runs tasks only (worker)
	// and of the node that runs the job's coordinator.
	WorkerRecovery      recoveryFigures `json:"worker_kill"`
	CoordinatorRecovery recoveryFigures `json:"coordinator_kill"`
}

// finishedIn finds the job's run time in `node submit`'s output.
var finishedIn = regexp.MustCompile(`finished in ([0-9.]+) s`)

// runClusterBench is `node bench cluster`.
func runClusterBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := clusterBenchConfig{Records: 60_000_000, Keys: 1000, Parallelism: 2, Nodes: 3, Kills: 6, Heartbeat: 3 * time.Second, Grace: node.DefaultDisconnectGrace}
	fs := flag.NewFlagSet("node bench cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "records of the throughput runs")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys")
	fs.IntVar(&cfg.Parallelism, "parallelism", cfg.Parallelism, "parallelism of every operator")
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "node processes")
	fs.IntVar(&cfg.Kills, "kills", cfg.Kills, "SIGKILL trials for the recovery time, alternately of a worker node and of the coordinator's node (0: none)")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat-timeout", cfg.Heartbeat, "the nodes' --heartbeat-timeout")
	fs.DurationVar(&cfg.Grace, "disconnect-grace", cfg.Grace, "the nodes' --disconnect-grace")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", 0, "average sleep per record in the count stage (both runs)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	fs.StringVar(&cfg.Plot, "plot", "", "also draw the data messages/s around each SIGKILL as an SVG chart into `FILE`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 || cfg.Records < 1 || cfg.Nodes < 2 || cfg.Kills < 0 || (cfg.Kills > 0 && cfg.Nodes < 3) || cfg.Parallelism < 1 || cfg.SleepMs < 0 ||
		cfg.Grace <= 0 || cfg.Grace > cfg.Heartbeat {
		fmt.Fprintln(stderr, "node bench cluster: needs --records ≥ 1, --nodes ≥ 2 (≥ 3 with --kills), --kills ≥ 0, --parallelism ≥ 1, --sleep-ms ≥ 0, 0 < --disconnect-grace ≤ --heartbeat-timeout and no arguments")
		return cli.ExitUsage
	}
	res, err := benchCluster(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "node bench cluster: %v\n", err)
		return cli.ExitFailure
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Fprintln(stdout, string(b))
		return cli.ExitOK
	}
	fmt.Fprintf(stdout, "keycount, %d records, %d keys, parallelism %d, sleep %v ms, %d nodes on one machine\n", res.Records, cfg.Keys, cfg.Parallelism, cfg.SleepMs, cfg.Nodes)
	fmt.Fprintf(stdout, "  one process      %12.0f records/s\n", res.OneProcessPerS)
	fmt.Fprintf(stdout, "  cluster          %12.0f records/s   (%.1f%% of one process; `node submit` took %.2f s of wall time)\n",
		res.ClusterPerS, 100*res.Ratio, res.SubmitWallS)
	fmt.Fprintf(stdout, "  on the wire      %12.1f bytes and %.3f messages per input record (a record in msgpack: event %d B, count %d B)\n",
		res.WireBytesPerRecord, res.WireMsgsPerRecord, res.RawEventBytes, res.RawCountBytes)
	if cfg.Kills > 0 {
		fmt.Fprintf(stdout, "  node kills (--heartbeat-timeout %v, --disconnect-grace %v):\n", cfg.Heartbeat, cfg.Grace)
	}
	res.WorkerRecovery.print(stdout, "a worker node")
	res.CoordinatorRecovery.print(stdout, "the coordinator's node")
	return cli.ExitOK
}

// benchCluster runs the measurements.
func benchCluster(ctx context.Context, cfg clusterBenchConfig, progress io.Writer) (*clusterBenchResult, error) {
	dir, err := os.MkdirTemp("", "weir-bench-cluster-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res := &clusterBenchResult{Records: cfg.Records}
	// A record's bytes as the wire encodes it (the batch's array header
	// left out).
	ev, err := plan.MsgpackCodec[keycount.Event]{}.AppendBatch(nil, plan.Records[keycount.Event]{{Key: "k000042", Seq: 123456}})
	if err != nil {
		return nil, err
	}
	cnt, err := plan.MsgpackCodec[keycount.Count]{}.AppendBatch(nil, plan.Records[keycount.Count]{{Key: "k000042", Count: 1234}})
	if err != nil {
		return nil, err
	}
	res.RawEventBytes, res.RawCountBytes = len(ev)-1, len(cnt)-1

	// One process, same job, same checkpoints (unaligned, every second).
	fmt.Fprintln(progress, "one process ...")
	g, err := keycount.Build(keycount.Config{Records: cfg.Records, Keys: cfg.Keys, Parallelism: cfg.Parallelism, SleepMs: cfg.SleepMs})
	if err != nil {
		return nil, err
	}
	r, err := weir.Run(ctx, g, weir.WithLogger(zerolog.Nop()),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Second, StateDir: filepath.Join(dir, "single")}))
	if err != nil {
		return nil, fmt.Errorf("one-process run: %w", err)
	}
	res.OneProcessPerS = float64(cfg.Records) / r.Duration.Seconds()

	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	bc, err := startNodeNet(netOptions{Exe: exe, Dir: dir, Nodes: cfg.Nodes, Heartbeat: cfg.Heartbeat, LogLevel: "warn", Monitor: true,
		Args: []string{"--disconnect-grace", cfg.Grace.String()}})
	if err != nil {
		return nil, err
	}
	defer bc.stop()

	fmt.Fprintln(progress, "cluster ...")
	before, err := bc.varz()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := bc.client("submit", "keycount", "--records", fmt.Sprint(cfg.Records), "--keys", fmt.Sprint(cfg.Keys),
		"--parallelism", fmt.Sprint(cfg.Parallelism), "--sleep-ms", fmt.Sprint(cfg.SleepMs))
	if err != nil {
		return nil, fmt.Errorf("cluster run: %w\n%s", err, out)
	}
	res.SubmitWallS = time.Since(start).Seconds()
	// The job's own run time, as its coordinator measured it from taking
	// the job to its end: like the one-process Duration, it leaves out the
	// client's start and connection.
	m := finishedIn.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("cluster run: no run time in the submit output:\n%s", out)
	}
	took, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil || took <= 0 {
		return nil, fmt.Errorf("cluster run: bad run time %q", m[1])
	}
	elapsed := time.Duration(took * float64(time.Second))
	after, err := bc.varz()
	if err != nil {
		return nil, err
	}
	res.ClusterPerS = float64(cfg.Records) / elapsed.Seconds()
	res.Ratio = res.ClusterPerS / res.OneProcessPerS
	res.WireBytesPerRecord = float64(after.InBytes-before.InBytes) / float64(cfg.Records)
	res.WireMsgsPerRecord = float64(after.InMsgs-before.InMsgs) / float64(cfg.Records)

	// Kill trials alternate: a worker node, then the coordinator's node.
	var traces []*wireTrace
	var names []string
	for i := 0; i < cfg.Kills; i++ {
		coord := i%2 == 1
		what := map[bool]string{false: "a worker node", true: "the coordinator's node"}[coord]
		fmt.Fprintf(progress, "kill %d of %d: %s ...\n", i+1, cfg.Kills, what)
		tr := &wireTrace{}
		traces, names = append(traces, tr), append(names, fmt.Sprintf("kill %d: %s", i+1, map[bool]string{false: "worker", true: "coordinator"}[coord]))
		d, err := killTrial(bc, cfg, coord, tr)
		if err != nil {
			return nil, fmt.Errorf("kill trial %d (%s): %w\n%s", i+1, what, err, bc.logTails(4000))
		}
		if coord {
			res.CoordinatorRecovery.add(d)
		} else {
			res.WorkerRecovery.add(d)
		}
	}
	if cfg.Plot != "" && len(traces) > 0 {
		if err := writeSVG(cfg.Plot, killPlot(traces, names)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// statusView is the part of `node status --json` the benchmark reads.
type statusView struct {
	Nodes []struct {
		Node     string   `json:"node"`
		Answered bool     `json:"answered"`
		Sees     []string `json:"sees"`
		BadInput *struct {
			Malformed   uint64 `json:"malformed"`
			UnknownType uint64 `json:"unknown_type"`
			BadSeq      uint64 `json:"bad_seq"`
		} `json:"bad_input"`
		Held     []heldView     `json:"local_state"`
		Restored []restoredView `json:"restores"`
	} `json:"nodes"`
	Jobs []jobStatusView `json:"jobs"`
}

// jobStatusView is one job in a statusView.
type jobStatusView struct {
	Name        string            `json:"name"`
	State       string            `json:"state"`
	Coordinator string            `json:"coordinator"`
	Restarts    int               `json:"restarts"`
	Tasks       map[string]string `json:"tasks"`
	Checkpoints []struct {
		ID uint64 `json:"id"`
	} `json:"checkpoints"`
}

// liveNodes are the nodes that answered.
func (s statusView) liveNodes() []string {
	var out []string
	for _, n := range s.Nodes {
		if n.Answered {
			out = append(out, n.Node)
		}
	}
	return out
}

// allSeeAll reports whether n nodes answered and each knows all n.
func (s statusView) allSeeAll(n int) bool {
	if len(s.liveNodes()) != n {
		return false
	}
	for _, node := range s.Nodes {
		if node.Answered && len(node.Sees) != n {
			return false
		}
	}
	return true
}

// varz reads the NATS server's counters from its monitoring endpoint.
func (nn *nodeNet) varz() (*server.Varz, error) {
	resp, err := http.Get(nn.monitor + "/varz")
	if err != nil {
		return nil, fmt.Errorf("NATS monitoring: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("NATS monitoring %s/varz: %s", nn.monitor, resp.Status)
	}
	var v server.Varz
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("NATS monitoring %s/varz: %w", nn.monitor, err)
	}
	return &v, nil
}
