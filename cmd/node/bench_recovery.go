package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/transport"
)

// recoveryBenchConfig is what `node bench recovery` measures.
type recoveryBenchConfig struct {
	Keys        int
	ValueBytes  int
	Parallelism int
	SleepMs     float64
	Interval    time.Duration
	Mode        string
	Heartbeat   time.Duration
	LocalWait   time.Duration
	Timeout     time.Duration
	Rounds      int    // restarts of each kind per setting; the summary takes their medians
	DirectIO    bool   // every node writes its local copy past the page cache (--checkpoint-direct-io)
	Plot        string // SVG file of the data messages/s around each restart (empty: none)
}

// recoveryCase is one restart measured: of one node or of the whole
// cluster, with local recovery on or off.
type recoveryCase struct {
	Restart       string `json:"restart"` // "one node" or "whole cluster"
	LocalRecovery bool   `json:"local_recovery"`
	Round         int    `json:"round"` // 1, 2, … of --rounds
	// StateBytes is the job's state at the checkpoint taken before the
	// kill, as the nodes' local copies report it.
	StateBytes int64  `json:"state_bytes"`
	Checkpoint uint64 `json:"checkpoint"`
	// ToRunningS is the time from starting the node(s) again to the first
	// data the restarted tasks send (the region runs again only once all its
	// tasks restored).
	ToRunningS   float64 `json:"restart_to_running_s"`
	TaskRestores int     `json:"task_restores"`
	RestoreMs    float64 `json:"restore_ms"` // the restores' time, summed over tasks
	// InstalledMs is, on the restarted node that took longest, the time
	// from the start of its first task restore to the end of its last:
	// until every task restored there ran (its key groups read, verified
	// and handed to the operator). Its tasks restore side by side, so this
	// is what the node waits, where RestoreMs adds up their overlapping
	// times.
	InstalledMs float64 `json:"installed_ms"`
	// DecodedMs is the same until every key group restored there was
	// decoded (the tasks run before: they decode a key group when they
	// first need it and the rest in the background).
	DecodedMs      float64 `json:"decoded_ms"`
	LocalBytes     int64   `json:"local_bytes"`
	RemoteBytes    int64   `json:"remote_bytes"`
	LocalSections  int     `json:"local_sections"`
	RemoteSections int     `json:"remote_sections"`

	trace *wireTrace // data messages over time around the kill, for --plot (round 1)
}

// recoveryBenchResult is what it prints.
type recoveryBenchResult struct {
	Keys       int            `json:"keys"`
	ValueBytes int            `json:"value_bytes"`
	DirectIO   bool           `json:"checkpoint_direct_io"`
	Cases      []recoveryCase `json:"cases"`
}

// runRecoveryBench is `node bench recovery`.
func runRecoveryBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := recoveryBenchConfig{Keys: 1_000_000, ValueBytes: 256, Parallelism: 3, SleepMs: 0.01, Interval: 5 * time.Second,
		Mode: "unaligned", Heartbeat: 3 * time.Second, LocalWait: 30 * time.Second, Timeout: 10 * time.Minute, Rounds: 3}
	fs := flag.NewFlagSet("node bench recovery", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "keys of the bigstate job (its state is about keys × value-bytes)")
	fs.IntVar(&cfg.ValueBytes, "value-bytes", cfg.ValueBytes, "bytes of state per key")
	fs.IntVar(&cfg.Parallelism, "parallelism", cfg.Parallelism, "parallelism of the job's source and keyed stage")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", cfg.SleepMs, "average sleep per record in the keyed stage")
	fs.DurationVar(&cfg.Interval, "checkpoint-interval", cfg.Interval, "checkpoint interval of the job")
	fs.StringVar(&cfg.Mode, "checkpoint-mode", cfg.Mode, "checkpoint mode of the job: aligned or unaligned")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat-timeout", cfg.Heartbeat, "the nodes' --heartbeat-timeout")
	fs.DurationVar(&cfg.LocalWait, "local-wait", cfg.LocalWait, "the nodes' --local-wait")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "bound on each wait (state filled, node back, job running)")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "restarts of each kind with local recovery on and off; the summary compares their medians")
	fs.StringVar(&cfg.Plot, "plot", "", "also draw the data messages/s around each kill and restart as an SVG chart into `FILE`")
	fs.BoolVar(&cfg.DirectIO, "checkpoint-direct-io", false, "start every node with --checkpoint-direct-io: its local copy is written past the page cache, so a local restore reads it from the disk")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 || cfg.Keys < 1 || cfg.ValueBytes < 1 || cfg.Parallelism < 1 || cfg.SleepMs < 0 || cfg.Interval <= 0 ||
		(cfg.Mode != "aligned" && cfg.Mode != "unaligned") || cfg.LocalWait < 0 || cfg.Timeout <= 0 || cfg.Rounds < 1 {
		fmt.Fprintln(stderr, "node bench recovery: needs --keys ≥ 1, --value-bytes ≥ 1, --parallelism ≥ 1, --sleep-ms ≥ 0, --checkpoint-interval > 0, --checkpoint-mode aligned or unaligned, --local-wait ≥ 0, --timeout > 0, --rounds ≥ 1 and no arguments")
		return cli.ExitUsage
	}
	res, err := benchRecovery(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "node bench recovery: %v\n", err)
		return cli.ExitFailure
	}
	if cfg.Plot != "" {
		if err := writeSVG(cfg.Plot, recoveryPlot(res.Cases)); err != nil {
			fmt.Fprintf(stderr, "node bench recovery: %v\n", err)
			return cli.ExitFailure
		}
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Fprintln(stdout, string(b))
		return cli.ExitOK
	}
	writeRecoveryTable(stdout, cfg, res)
	return cli.ExitOK
}

// writeRecoveryTable prints the cases as a table.
func writeRecoveryTable(w io.Writer, cfg recoveryBenchConfig, res *recoveryBenchResult) {
	copies := "local copies through the page cache"
	if cfg.DirectIO {
		copies = "local copies written past the page cache (--checkpoint-direct-io)"
	}
	fmt.Fprintf(w, "bigstate, %d keys × %d B, parallelism %d, %s checkpoints every %v, 3 nodes on one machine (n1 embeds NATS), %s\n",
		cfg.Keys, cfg.ValueBytes, cfg.Parallelism, cfg.Mode, cfg.Interval, copies)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "restart\tlocal recovery\tround\tstate MB\tcheckpoint\trestart → running s\ttask restores\trestore ms (sum)\tall running ms\tall decoded ms\tlocal MB\tremote MB\tlocal sections\tremote sections\t")
	for _, c := range res.Cases {
		on := map[bool]string{true: "on", false: "off"}[c.LocalRecovery]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%d\t%.2f\t%d\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%d\t%d\t\n", c.Restart, on, c.Round, mb(c.StateBytes), c.Checkpoint,
			c.ToRunningS, c.TaskRestores, c.RestoreMs, c.InstalledMs, c.DecodedMs, mb(c.LocalBytes), mb(c.RemoteBytes), c.LocalSections, c.RemoteSections)
	}
	tw.Flush()
	for _, restart := range []string{restartOne, restartAll} {
		on, off := res.medians(restart, true), res.medians(restart, false)
		if on.rounds > 0 && off.rounds > 0 && on.toRunningS > 0 && on.restoreMs > 0 && on.installedMs > 0 && on.decodedMs > 0 {
			fmt.Fprintf(w, "  %s with local recovery (medians of %d and %d rounds): restart → running %.1f× faster (%.2f s vs %.2f s), restores %.1f× faster (%.0f ms vs %.0f ms summed over tasks), every task running %.1f× sooner (%.0f ms vs %.0f ms), every key group decoded %.1f× sooner (%.0f ms vs %.0f ms)\n",
				restart, on.rounds, off.rounds, off.toRunningS/on.toRunningS, on.toRunningS, off.toRunningS, off.restoreMs/on.restoreMs, on.restoreMs, off.restoreMs,
				off.installedMs/on.installedMs, on.installedMs, off.installedMs, off.decodedMs/on.decodedMs, on.decodedMs, off.decodedMs)
		}
	}
}

// caseMedians are the medians over the rounds of one kind of restart.
type caseMedians struct {
	rounds                                        int
	toRunningS, restoreMs, installedMs, decodedMs float64
}

// medians returns the medians of the cases of restart with local recovery
// on or off: a single restart on a shared machine varies several times
// over from one to the next.
func (r *recoveryBenchResult) medians(restart string, local bool) caseMedians {
	var running, restore, installed, decoded []float64
	for _, c := range r.Cases {
		if c.Restart == restart && c.LocalRecovery == local {
			running, restore = append(running, c.ToRunningS), append(restore, c.RestoreMs)
			installed, decoded = append(installed, c.InstalledMs), append(decoded, c.DecodedMs)
		}
	}
	if len(running) == 0 {
		return caseMedians{}
	}
	return caseMedians{rounds: len(running), toRunningS: median(running), restoreMs: median(restore), installedMs: median(installed),
		decodedMs: median(decoded)}
}

// mb is b in megabytes (10⁶ bytes).
func mb(b int64) float64 { return float64(b) / 1e6 }

// Kinds of restart.
const (
	restartOne = "one node"
	restartAll = "whole cluster"
)

// benchRecovery runs the measurements: per round a cluster with local
// recovery on, then one with it off, each filled from scratch (the on and
// off runs of a round see about the same load on a shared machine).
func benchRecovery(ctx context.Context, cfg recoveryBenchConfig, progress io.Writer) (*recoveryBenchResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	res := &recoveryBenchResult{Keys: cfg.Keys, ValueBytes: cfg.ValueBytes, DirectIO: cfg.DirectIO}
	for round := 1; round <= cfg.Rounds; round++ {
		for _, local := range []bool{true, false} {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			cases, err := recoveryRuns(exe, cfg, local, round, progress)
			if err != nil {
				return nil, fmt.Errorf("local recovery %v, round %d: %w", local, round, err)
			}
			res.Cases = append(res.Cases, cases...)
		}
	}
	return res, nil
}

// recoveryNodeArgs is the `node start` flags of every node of a run, with
// local recovery on or off.
func recoveryNodeArgs(cfg recoveryBenchConfig, local bool) []string {
	args := []string{"--local-wait", cfg.LocalWait.String()}
	if !local {
		args = append(args, "--local-recovery=false")
	}
	if cfg.DirectIO {
		args = append(args, "--checkpoint-direct-io")
	}
	return args
}

// recoveryRuns starts a 3-node cluster (local recovery on or off on every
// node), fills the bigstate job's state, SIGKILLs a node that runs its
// tasks and starts it again with its workdir, then does the same to the
// whole cluster, from a newer checkpoint.
func recoveryRuns(exe string, cfg recoveryBenchConfig, local bool, round int, progress io.Writer) ([]recoveryCase, error) {
	dir, err := os.MkdirTemp("", "weir-bench-recovery-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bc, err := startNodeNet(netOptions{Exe: exe, Dir: dir, Nodes: 3, Heartbeat: cfg.Heartbeat, LogLevel: "warn", Args: recoveryNodeArgs(cfg, local)})
	if err != nil {
		return nil, err
	}
	defer bc.stop()
	w := newDataWatch()
	var trace atomic.Pointer[wireTrace] // the case being measured
	sub, err := bc.nc.Subscribe("weir.bigstate.data.>", func(m *nats.Msg) {
		w.observe(m)
		if tr := trace.Load(); tr != nil {
			tr.note(time.Now())
		}
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()

	fmt.Fprintf(progress, "local recovery %v: round %d: filling %d keys × %d B ...\n", local, round, cfg.Keys, cfg.ValueBytes)
	if out, err := bc.client("submit", "bigstate", "--records", "-1", "--keys", fmt.Sprint(cfg.Keys),
		"--value-bytes", fmt.Sprint(cfg.ValueBytes), "--parallelism", fmt.Sprint(cfg.Parallelism), "--sleep-ms", fmt.Sprint(cfg.SleepMs),
		"--checkpoint-interval", cfg.Interval.String(), "--checkpoint-mode", cfg.Mode, "--coordinator", nodeID(2), "--detach"); err != nil {
		return nil, fmt.Errorf("submit: %w\n%s", err, out)
	}
	target := int64(cfg.Keys) * int64(cfg.ValueBytes)
	var cases []recoveryCase
	var last uint64 // the checkpoint restored last
	for _, restart := range []string{restartOne, restartAll} {
		c, err := recoveryRound(bc, w, &trace, cfg, local, restart, round, target, last, progress)
		if err != nil {
			return nil, err
		}
		last = c.Checkpoint
		cases = append(cases, c)
	}
	if out, err := bc.client("cancel", "bigstate"); err != nil {
		return nil, fmt.Errorf("cancel: %w\n%s", err, out)
	}
	return cases, nil
}

// recoveryRound waits for a checkpoint newer than last that holds target
// bytes of state on the nodes, kills the node(s) of restart and starts
// them again, and measures the restart.
func recoveryRound(bc *nodeNet, w *dataWatch, trace *atomic.Pointer[wireTrace], cfg recoveryBenchConfig, local bool, restart string,
	round int, target int64, last uint64, progress io.Writer) (recoveryCase, error) {
	var job jobStatusView
	var ckpt uint64
	var held int64
	filled := func() bool {
		s, j, ok := bc.runningJob("bigstate")
		if !ok {
			return false
		}
		job = j
		ckpt, held = fullCheckpoint(s, "bigstate", target)
		return ckpt > last
	}
	if !poll.Until(cfg.Timeout, 200*time.Millisecond, filled) {
		return recoveryCase{}, fmt.Errorf("%s: no checkpoint holding %d bytes of state on the nodes within %v\n%s", restart, target, cfg.Timeout, bc.logTails(3000))
	}
	c := recoveryCase{Restart: restart, LocalRecovery: local, Round: round, StateBytes: held, Checkpoint: ckpt}
	victims := []string{nodeID(3), nodeID(2), nodeID(1)}
	if restart == restartOne {
		v := killVictim(job, false)
		if v == "" {
			return recoveryCase{}, fmt.Errorf("no node to kill: job %+v", job)
		}
		victims = []string{v}
	}
	fmt.Fprintf(progress, "local recovery %v: round %d: %s: SIGKILL of %v after checkpoint %d (%.1f MB of state) ...\n",
		local, round, restart, victims, ckpt, mb(held))
	c.trace = &wireTrace{}
	trace.Store(c.trace)
	// A second of data before the kill, for the plot.
	poll.Until(2*time.Second, 50*time.Millisecond, func() bool { return time.Since(c.trace.begun()) >= time.Second })
	killed := time.Now()
	for _, v := range victims {
		if err := bc.kill(v); err != nil {
			return recoveryCase{}, err
		}
	}
	started := time.Now()
	w.reset(started)
	if err := bc.restart(victims, cfg.Timeout); err != nil {
		return recoveryCase{}, err
	}
	// Running: the restarted node (any node, after a whole restart)
	// sends data again; its restores are reported once all of them ran.
	from := ""
	if restart == restartOne {
		from = victims[0]
	}
	var sum restoredView
	running := func() bool {
		if _, ok := w.first(from); !ok {
			return false
		}
		s, j, ok := bc.runningJob("bigstate")
		if !ok {
			return false
		}
		want := 0
		for _, n := range j.Tasks {
			if restart == restartAll || n == victims[0] {
				want++
			}
		}
		sum = s.restored("bigstate", victims)
		return want > 0 && sum.Restores >= want
	}
	if !poll.Until(cfg.Timeout, 100*time.Millisecond, running) {
		return recoveryCase{}, fmt.Errorf("%s: the job did not run again within %v\n%s", restart, cfg.Timeout, bc.logTails(3000))
	}
	at, _ := w.first(from)
	c.trace.mark(killed, at)
	c.ToRunningS = at.Sub(started).Seconds()
	c.TaskRestores, c.RestoreMs, c.InstalledMs = sum.Restores, sum.TookMs, sum.SpanMs
	// The tasks run before every key group is decoded: wait for that too.
	decoded := func() bool {
		s, err := bc.status()
		if err != nil {
			return false
		}
		sum = s.restored("bigstate", victims)
		return sum.Decoded >= sum.Restores
	}
	if !poll.Until(cfg.Timeout, 100*time.Millisecond, decoded) {
		return recoveryCase{}, fmt.Errorf("%s: the restored key groups were not all decoded within %v\n%s", restart, cfg.Timeout, bc.logTails(3000))
	}
	c.DecodedMs = sum.DecodedSpanMs
	c.LocalBytes, c.RemoteBytes, c.LocalSections, c.RemoteSections = sum.LocalBytes, sum.RemoteBytes, sum.LocalSections, sum.RemoteSections
	fmt.Fprintf(progress, "local recovery %v: %s: running %.2f s after the restart; %.1f MB local, %.1f MB remote\n",
		local, restart, c.ToRunningS, mb(c.LocalBytes), mb(c.RemoteBytes))
	if round > 1 {
		c.trace = nil // the plot shows the first round
	}
	return c, nil
}

// runningJob reads the status and the job named name in it, if it runs.
func (nn *nodeNet) runningJob(name string) (statusView, jobStatusView, bool) {
	s, err := nn.status()
	if err != nil {
		return s, jobStatusView{}, false
	}
	j, err := s.jobView(name)
	return s, j, err == nil && j.State == "running"
}

// restart starts the killed nodes again with their workdirs (n1 first when
// it is among them: it runs the NATS server) and waits until all 3 nodes
// see each other.
func (nn *nodeNet) restart(ids []string, within time.Duration) error {
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if err := nn.startNode(id); err != nil {
			return err
		}
		if nn.embedsNATS(id) {
			up := func() bool {
				nc, err := nats.Connect(nn.url)
				if err != nil {
					return false
				}
				nc.Close()
				return true
			}
			if !poll.Until(within, 20*time.Millisecond, up) {
				return fmt.Errorf("the NATS server of %s did not come back within %v", id, within)
			}
		}
	}
	return nn.waitNodes(nn.opts.Nodes, within)
}

// fullCheckpoint is the newest checkpoint of job whose state, summed over
// the nodes' local copies, is at least target bytes, and that sum; 0 if
// none is.
func fullCheckpoint(s statusView, job string, target int64) (uint64, int64) {
	sums := map[uint64]int64{}
	for _, n := range s.Nodes {
		for _, h := range n.Held {
			if h.Job == job {
				sums[h.Checkpoint] += h.Bytes
			}
		}
	}
	var best uint64
	for id, b := range sums {
		if b >= target && id > best {
			best = id
		}
	}
	return best, sums[best]
}

// restoredView is a node's restore counters for one job in `node status`.
type restoredView struct {
	Job            string  `json:"job"`
	Restores       int     `json:"task_restores"`
	LocalBytes     int64   `json:"local_bytes"`
	RemoteBytes    int64   `json:"remote_bytes"`
	LocalSections  int     `json:"local_sections"`
	RemoteSections int     `json:"remote_sections"`
	TookMs         float64 `json:"took_ms"`
	SpanMs         float64 `json:"span_ms"`
	Decoded        int     `json:"decoded_restores"`
	DecodedSpanMs  float64 `json:"decoded_span_ms"`
}

// heldView is one entry of a node's local state in `node status`.
type heldView struct {
	Job        string `json:"job"`
	Checkpoint uint64 `json:"checkpoint"`
	Bytes      int64  `json:"bytes"`
}

// restored sums the restore counters of job on nodes; SpanMs is the
// longest node's.
func (s statusView) restored(job string, nodes []string) restoredView {
	sum := restoredView{Job: job}
	for _, n := range s.Nodes {
		if !n.Answered || !slices.Contains(nodes, n.Node) {
			continue
		}
		for _, r := range n.Restored {
			if r.Job != job {
				continue
			}
			sum.Restores += r.Restores
			sum.LocalBytes += r.LocalBytes
			sum.RemoteBytes += r.RemoteBytes
			sum.LocalSections += r.LocalSections
			sum.RemoteSections += r.RemoteSections
			sum.TookMs += r.TookMs
			sum.SpanMs = max(sum.SpanMs, r.SpanMs)
			sum.Decoded += r.Decoded
			sum.DecodedSpanMs = max(sum.DecodedSpanMs, r.DecodedSpanMs)
		}
	}
	return sum
}

// dataWatch records, per node, when it first sent a data message after a
// point in time. Only messages of links started after that point count
// (their generation, a time stamp taken when a sender's stand-in started,
// is later): what a killed incarnation sent may still be on its way.
type dataWatch struct {
	mu    sync.Mutex
	since time.Time
	seen  map[string]time.Time // node → its first data message after since
}

func newDataWatch() *dataWatch { return &dataWatch{seen: map[string]time.Time{}} }

// observe takes one data message (a NATS handler).
func (w *dataWatch) observe(m *nats.Msg) {
	now := time.Now()
	node, _, _ := strings.Cut(m.Header.Get(transport.HeaderFrom), "/")
	gen, err := strconv.ParseInt(m.Header.Get(transport.HeaderGen), 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() || err != nil || gen < w.since.UnixNano() {
		return
	}
	if _, ok := w.seen[node]; !ok {
		w.seen[node] = now
	}
}

// reset forgets what was seen and watches from since.
func (w *dataWatch) reset(since time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since, w.seen = since, map[string]time.Time{}
}

// first is when node ("": any node) first sent data since the reset.
func (w *dataWatch) first(node string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if node != "" {
		t, ok := w.seen[node]
		return t, ok
	}
	var first time.Time
	for _, t := range w.seen {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, !first.IsZero()
}
