package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cli"
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
	SleepMs     float64
}

// clusterBenchResult is what it prints.
type clusterBenchResult struct {
	Records            int64     `json:"records"`
	OneProcessPerS     float64   `json:"one_process_records_per_s"`
	ClusterPerS        float64   `json:"cluster_records_per_s"`
	SubmitWallS        float64   `json:"submit_wall_s"`
	Ratio              float64   `json:"cluster_vs_one_process"`
	WireBytesPerRecord float64   `json:"wire_bytes_per_record"`
	WireMsgsPerRecord  float64   `json:"wire_msgs_per_record"`
	RawEventBytes      int       `json:"raw_event_bytes"`
	RawCountBytes      int       `json:"raw_count_bytes"`
	RecoveryS          []float64 `json:"recovery_s"`
	RecoveryP50S       float64   `json:"recovery_p50_s"`
	RecoveryMaxS       float64   `json:"recovery_max_s"`
}

// finishedIn finds the job's run time in `node submit`'s output.
var finishedIn = regexp.MustCompile(`finished in ([0-9.]+) s`)

// runClusterBench is `node bench cluster`.
func runClusterBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := clusterBenchConfig{Records: 60_000_000, Keys: 1000, Parallelism: 2, Nodes: 3, Kills: 5, Heartbeat: 3 * time.Second}
	fs := flag.NewFlagSet("node bench cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "records of the throughput runs")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys")
	fs.IntVar(&cfg.Parallelism, "parallelism", cfg.Parallelism, "parallelism of every operator")
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "node processes")
	fs.IntVar(&cfg.Kills, "kills", cfg.Kills, "SIGKILL trials for the recovery time (0: none)")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat-timeout", cfg.Heartbeat, "the nodes' --heartbeat-timeout")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", 0, "average sleep per record in the count stage (both runs)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 || cfg.Records < 1 || cfg.Nodes < 2 || cfg.Kills < 0 || cfg.Parallelism < 1 || cfg.SleepMs < 0 {
		fmt.Fprintln(stderr, "node bench cluster: needs --records ≥ 1, --nodes ≥ 2, --kills ≥ 0, --parallelism ≥ 1, --sleep-ms ≥ 0 and no arguments")
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
	if len(res.RecoveryS) > 0 {
		fmt.Fprintf(stdout, "  SIGKILL → running again (heartbeat timeout %v): p50 %.2f s, max %.2f s over %d kills %v\n",
			cfg.Heartbeat, res.RecoveryP50S, res.RecoveryMaxS, len(res.RecoveryS), res.RecoveryS)
	}
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

	bc, err := startBenchCluster(dir, cfg)
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

	for i := 0; i < cfg.Kills; i++ {
		fmt.Fprintf(progress, "kill %d of %d ...\n", i+1, cfg.Kills)
		d, err := bc.killTrial(cfg)
		if err != nil {
			return nil, fmt.Errorf("kill trial %d: %w\n%s", i+1, err, bc.logTails(4000))
		}
		res.RecoveryS = append(res.RecoveryS, d.Seconds())
	}
	if len(res.RecoveryS) > 0 {
		s := append([]float64(nil), res.RecoveryS...)
		sort.Float64s(s)
		res.RecoveryP50S, res.RecoveryMaxS = weir.Quantile(s, 0.5), s[len(s)-1]
	}
	return res, nil
}

// benchNet is a cluster of node processes as `make cluster` starts it: n1
// embeds the NATS server (with its HTTP monitoring on, whose /varz counts
// the bytes on the wire) and the others join it.
type benchNet struct {
	dir     string
	exe     string
	cfg     clusterBenchConfig
	url     string // the NATS server in n1
	monitor string // its monitoring base URL
	nc      *nats.Conn
	mu      sync.Mutex
	nodes   map[string]*exec.Cmd
}

// startBenchCluster starts the nodes and waits until they all see each other.
func startBenchCluster(dir string, cfg clusterBenchConfig) (*benchNet, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	bc := &benchNet{dir: dir, exe: exe, cfg: cfg, nodes: map[string]*exec.Cmd{},
		url:     fmt.Sprintf("nats://127.0.0.1:%d", ports[0]),
		monitor: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	if err := bc.startNode("n1", "--embed-nats", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--embed-monitor", fmt.Sprintf("127.0.0.1:%d", ports[1])); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for bc.nc == nil {
		if bc.nc, err = nats.Connect(bc.url); err != nil {
			if time.Now().After(deadline) {
				bc.stop()
				return nil, fmt.Errorf("node n1's NATS server at %s: %w", bc.url, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i := 2; i <= cfg.Nodes; i++ {
		if err := bc.startNode(fmt.Sprintf("n%d", i), "--nats", bc.url); err != nil {
			bc.stop()
			return nil, err
		}
	}
	if err := bc.waitNodes(cfg.Nodes, 30*time.Second); err != nil {
		bc.stop()
		return nil, err
	}
	return bc, nil
}

// freePorts finds n free TCP ports on the loopback address.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startNode starts one node process with the given connection flags.
func (bc *benchNet) startNode(id string, conn ...string) error {
	log, err := os.OpenFile(filepath.Join(bc.dir, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := append([]string{"start", "--id", id, "--workdir", filepath.Join(bc.dir, id),
		"--heartbeat-timeout", bc.cfg.Heartbeat.String(), "--log-level", "warn"}, conn...)
	cmd := exec.Command(bc.exe, args...)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start node %s: %w", id, err)
	}
	go func() { _ = cmd.Wait(); log.Close() }()
	bc.mu.Lock()
	bc.nodes[id] = cmd
	bc.mu.Unlock()
	return nil
}

// waitNodes waits until n nodes answer the status and each sees all n.
func (bc *benchNet) waitNodes(n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if s, err := bc.status(); err == nil && s.allSeeAll(n) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%d nodes did not all answer within %v", n, within)
}

// client runs a client command against the cluster.
func (bc *benchNet) client(args ...string) ([]byte, error) {
	cmd := exec.Command(bc.exe, append(args, "--nats", bc.url)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// status reads `node status --json`.
func (bc *benchNet) status() (statusView, error) {
	var s statusView
	out, err := exec.Command(bc.exe, "status", "--json", "--wait", "300ms", "--nats", bc.url).Output()
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(out, &s)
}

// varz reads the NATS server's counters from its monitoring endpoint.
func (bc *benchNet) varz() (*server.Varz, error) {
	resp, err := http.Get(bc.monitor + "/varz")
	if err != nil {
		return nil, fmt.Errorf("NATS monitoring: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("NATS monitoring %s/varz: %s", bc.monitor, resp.Status)
	}
	var v server.Varz
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("NATS monitoring %s/varz: %w", bc.monitor, err)
	}
	return &v, nil
}

// killTrial runs keycount until it has checkpoints, SIGKILLs a node that
// runs its tasks (not its coordinator), and measures the time until data
// flows again after the restart; then cancels the job and restarts the node.
func (bc *benchNet) killTrial(cfg clusterBenchConfig) (time.Duration, error) {
	if out, err := bc.client("submit", "keycount", "--records", "-1", "--keys", fmt.Sprint(cfg.Keys),
		"--parallelism", fmt.Sprint(cfg.Parallelism), "--sleep-ms", "0.002", "--coordinator", "n1", "--detach"); err != nil {
		return 0, fmt.Errorf("submit: %w\n%s", err, out)
	}
	var lastData time.Time
	var mu sync.Mutex
	sub, err := bc.nc.Subscribe("weir.keycount.data.>", func(*nats.Msg) {
		mu.Lock()
		lastData = time.Now()
		mu.Unlock()
	})
	if err != nil {
		return 0, err
	}
	defer sub.Unsubscribe()
	var victim string
	var restarts int
	deadline := time.Now().Add(60 * time.Second)
	for victim == "" {
		if time.Now().After(deadline) {
			return 0, errors.New("no checkpoint with a task on another node within 60s")
		}
		time.Sleep(200 * time.Millisecond)
		s, err := bc.status()
		if err != nil {
			continue
		}
		for _, j := range s.Jobs {
			if j.Name != "keycount" || j.State != "running" || len(j.Checkpoints) < 2 {
				continue
			}
			restarts = j.Restarts
			for _, node := range j.Tasks {
				if node != j.Coordinator && node != "n1" { // n1 runs the NATS server
					victim = node
				}
			}
		}
	}
	bc.mu.Lock()
	cmd := bc.nodes[victim]
	bc.mu.Unlock()
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, err
	}
	// Running again: the region restarted and data flows after that.
	var restartedAt time.Time
	for restartedAt.IsZero() {
		if time.Since(killed) > 60*time.Second {
			return 0, errors.New("the job did not restart within 60s of the kill")
		}
		s, err := bc.status()
		if err == nil {
			for _, j := range s.Jobs {
				if j.Name == "keycount" && j.Restarts > restarts {
					restartedAt = time.Now()
				}
			}
		}
	}
	var running time.Time
	for running.IsZero() {
		if time.Since(killed) > 90*time.Second {
			return 0, errors.New("no data after the restart within 90s of the kill")
		}
		mu.Lock()
		if lastData.After(restartedAt.Add(-300 * time.Millisecond)) {
			running = lastData
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	if out, err := bc.client("cancel", "keycount"); err != nil {
		return 0, fmt.Errorf("cancel: %w\n%s", err, out)
	}
	for {
		s, err := bc.status()
		done := err == nil
		for _, j := range s.Jobs {
			if j.Name == "keycount" && j.State == "running" {
				done = false
			}
		}
		if done {
			break
		}
		if time.Since(killed) > 120*time.Second {
			return 0, errors.New("the job did not end after cancel")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := bc.startNode(victim, "--nats", bc.url); err != nil {
		return 0, err
	}
	if err := bc.waitNodes(bc.cfg.Nodes, 30*time.Second); err != nil {
		return 0, err
	}
	return running.Sub(killed), nil
}

// logTails is the end of each node's log (at most n bytes of each), for an
// error report.
func (bc *benchNet) logTails(n int) string {
	var b strings.Builder
	for i := 1; i <= bc.cfg.Nodes; i++ {
		id := fmt.Sprintf("n%d", i)
		data, err := os.ReadFile(filepath.Join(bc.dir, id+".log"))
		if err != nil {
			fmt.Fprintf(&b, "--- log of %s: %v\n", id, err)
			continue
		}
		if len(data) > n {
			data = data[len(data)-n:]
		}
		fmt.Fprintf(&b, "--- end of %s's log:\n%s\n", id, data)
	}
	return b.String()
}

// stop kills the nodes and the server.
func (bc *benchNet) stop() {
	bc.mu.Lock()
	for _, cmd := range bc.nodes {
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	bc.mu.Unlock()
	if bc.nc != nil {
		bc.nc.Close()
	}
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
	} `json:"nodes"`
	Jobs []struct {
		Name        string            `json:"name"`
		State       string            `json:"state"`
		Coordinator string            `json:"coordinator"`
		Restarts    int               `json:"restarts"`
		Tasks       map[string]string `json:"tasks"`
		Checkpoints []struct {
			ID uint64 `json:"id"`
		} `json:"checkpoints"`
	} `json:"jobs"`
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
