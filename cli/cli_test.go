package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/backpressure"
	"github.com/weirstream/weir/samples/keycount"
)

// The jobs the tests run through the public Main.
func init() {
	Register("keycount", "keyed running count", func(p JobParams) (*weir.Graph, error) {
		return keycount.Build(keycount.Config{Records: p.Records, Keys: p.Keys, Parallelism: p.Parallelism, Out: p.Out, SleepMs: p.SleepMs})
	})
	Register("backpressure", "sleepy shuffled pipeline", func(p JobParams) (*weir.Graph, error) {
		return backpressure.Build(backpressure.Config{Records: p.Records, Parallelism: p.Parallelism, SleepMs: p.SleepMs})
	})
	Register("fail-build", "a builder that always fails", func(JobParams) (*weir.Graph, error) {
		return nil, errors.New("fail-build: records must be prime")
	})
	Register("fail-run", "a job whose map fails on record 7", func(p JobParams) (*weir.Graph, error) {
		g := weir.NewGraph("fail-run")
		s := weir.Generate(g, "source", p.Records, func(i int64) int64 { return i })
		m := weir.MapErr(s, "picky", func(i int64) (int64, error) {
			if i == 7 {
				return 0, errors.New("seven is not allowed")
			}
			return i, nil
		})
		weir.ToSink(m, "sink", weir.DiscardSink[int64](nil))
		return g, nil
	})
	RegisterCommand("echo-args", "[ARGS]", "test command that records its arguments", func(_ context.Context, args []string, stdout, _ io.Writer) int {
		echoArgs = args
		fmt.Fprintln(stdout, "echoed")
		return 3
	})
	RegisterJob("report", "a job with a report", func(p JobParams) (*Job, error) {
		g := weir.NewGraph("report")
		s := weir.Generate(g, "source", p.Records, func(i int64) int64 { return i })
		weir.ToSink(s, "sink", weir.DiscardSink[int64](nil))
		return &Job{Graph: g, Report: func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "report: seed %d\n", p.Seed)
			return err
		}}, nil
	})
}

// echoArgs are the arguments the echo-args test command last got.
var echoArgs []string

// knownJobs is the job list the error messages name.
const knownJobs = "backpressure, fail-build, fail-run, keycount, report"

// result is one Main call's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// runMain calls Main with buffers.
func runMain(t *testing.T, args ...string) result {
	t.Helper()
	return runMainContext(t, context.Background(), args...)
}

func runMainContext(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := MainContext(ctx, args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// lastLine is the last non-empty line of s (the error message after any logs).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestUnknownJob(t *testing.T) {
	r := runMain(t, "run", "keycont", "--checkpoint-mode", "none")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
	}
	want := `node: unknown job "keycont" (known: ` + knownJobs + ")\n"
	if r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
	if r.stdout != "" {
		t.Fatalf("stdout %q, want nothing", r.stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the one-line message
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run"}, "no job named (known: " + knownJobs + ")"},
		{[]string{"run", "keycount", "extra"}, `unexpected argument "extra" after job "keycount"`},
		{[]string{"run", "keycount", "--recrods", "5"}, "flag provided but not defined: --recrods"},
		{[]string{"run", "keycount", "--records"}, "flag needs an argument: --records"},
		{[]string{"run", "keycount", "--parallelism", "x"}, `invalid value "x" for flag --parallelism`},
		{[]string{"run", "keycount", "--parallelism", "0"}, "--parallelism 0 is out of range: want 1 to 128"},
		{[]string{"run", "keycount", "--operator-parallelism", "cnt=3"}, `--operator-parallelism: the job has no operator "cnt" (its operators: count, sink, source)`},
		{[]string{"run", "keycount", "--operator-parallelism", "count=129"}, `"count=129": want a parallelism from 1 to 128`},
		{[]string{"run", "keycount", "--operator-parallelism", "count"}, `"count": want NAME=N`},
		{[]string{"run", "keycount", "--operator-parallelism", "count=2,count=3"}, `operator "count" is named twice`},
		{[]string{"submit", "keycount", "--operator-parallelism", "nosuch=2"}, `the job has no operator "nosuch"`},
		{[]string{"run", "keycount", "--records", "-2"}, "--records -2 is out of range: want -1 (unbounded) or 0 to"},
		{[]string{"run", "keycount", "--keys", "0"}, "--keys 0 is out of range: want 1 to"},
		{[]string{"run", "keycount", "--sleep-ms", "-1"}, "--sleep-ms -1 is out of range: want 0 to"},
		{[]string{"run", "keycount", "--duration", "-1s"}, "--duration -1s is out of range: want 0 (no limit) or"},
		{[]string{"run", "keycount", "--checkpoint-mode", "sideways"}, `unknown checkpoint mode "sideways"`},
		{[]string{"run", "keycount", "--aligned-timeout", "1s"}, "--aligned-timeout needs --checkpoint-mode aligned"},
		{[]string{"run", "keycount", "--checkpoint-interval", "0s"}, "--checkpoint-interval 0s is out of range: want 1ms to"},
		{[]string{"run", "keycount", "--retain", "0"}, "--retain 0 is out of range: want 1 to"},
		{[]string{"run", "keycount", "--restore", "yesterday"}, `--restore "yesterday": want latest or a checkpoint id`},
		{[]string{"run", "keycount", "--restore", "latest", "--checkpoint-mode", "none"}, "--restore needs checkpoints"},
		{[]string{"run", "keycount", "--checkpoint-direct-io", "--checkpoint-mode", "none"}, "--checkpoint-direct-io needs checkpoints"},
		{[]string{"run", "keycount", "--log-level", "loud"}, `--log-level "loud": want debug, info, warn or error`},
		{[]string{"run", "keycount", "--batch-size", "-1"}, "--batch-size -1 is out of range: want 0 (runtime default) or 1 to"},
		{[]string{"start"}, "--id is required"},
		{[]string{"start", "--id", "n1"}, "--workdir is required"},
		{[]string{"start", "--id", "a.b", "--workdir", "w"}, "character '.' at offset 1 is not allowed"},
		{[]string{"start", "--id", "n1", "--workdir", "w", "--embed-nats", "127.0.0.1:0", "--nats", "nats://x:1"}, "--embed-nats and --nats exclude each other"},
		{[]string{"start", "--id", "n1", "--workdir", "w", "--embed-user", "u"}, "need --embed-nats"},
		{[]string{"start", "--id", "n1", "--workdir", "w", "--slots", "0"}, "--slots 0 must be at least 1"},
		{[]string{"start", "--id", "n1", "--workdir", "w", "--disconnect-grace", "0s"}, "--disconnect-grace 0s must be positive and at most --heartbeat-timeout 3s"},
		{[]string{"start", "--id", "n1", "--workdir", "w", "--disconnect-grace", "4s"}, "--disconnect-grace 4s must be positive and at most --heartbeat-timeout 3s"},
		{[]string{"start", "--id", "n1", "--workdir", "w", "extra"}, `start: unexpected argument "extra"`},
		{[]string{"submit"}, "submit: want exactly one job"},
		{[]string{"submit", "nosuchjob"}, `unknown job "nosuchjob"`},
		{[]string{"submit", "keycount", "--parallelism", "0"}, "--parallelism 0 is out of range: want 1 to 128"},
		{[]string{"cancel"}, "cancel: want exactly one job name"},
		{[]string{"cancel", "a.b"}, "character '.'"},
		{[]string{"status", "extra"}, `status: unexpected argument "extra"`},
		{[]string{"inspect", "a", "b"}, "inspect: want at most one subject"},
		{[]string{"version", "now"}, `version: unexpected argument "now"`},
		{[]string{"help", "frobnicate"}, `help: unknown command "frobnicate"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runMain(t, tc.args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
			}
			msg := lastLine(r.stderr)
			if !strings.HasPrefix(msg, "node: ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q, want one line starting with \"node: \" containing %q", msg, tc.want)
			}
			if r.stdout != "" {
				t.Fatalf("stdout %q, want nothing", r.stdout)
			}
		})
	}
}

func TestHelpListsCommandsJobsAndFlags(t *testing.T) {
	var f runFlags
	var flags []string
	newRunFlagSet(&f).VisitAll(func(fl *flag.Flag) { flags = append(flags, "--"+fl.Name) })
	if len(flags) < 20 {
		t.Fatalf("only %d flags declared: %v", len(flags), flags)
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"run", "--help"}, {"run", "keycount", "-h"}, {"help", "run"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runMain(t, args...)
			if r.code != ExitOK {
				t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
			}
			for _, want := range append(flags, "keycount", "keyed running count", "fail-run", "a job whose map fails on record 7",
				"(default 1000000)", "(default unaligned)", "(default ./weir-state)") {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("help lacks %q:\n%s", want, r.stdout)
				}
			}
			if args[0] != "run" && args[len(args)-1] != "run" {
				for _, cmd := range []string{"run JOB [flags]", "help [COMMAND]", "version"} {
					if !strings.Contains(r.stdout, cmd) {
						t.Errorf("help lacks command %q", cmd)
					}
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := runMain(t, "version")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "node ") || !strings.Contains(r.stdout, "weir") {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestBuilderErrorIsUsageError(t *testing.T) {
	r := runMain(t, "run", "fail-build", "--checkpoint-mode", "none")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
	}
	if want := "node: run fail-build: fail-build: records must be prime\n"; r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
}

func TestJobFailureExitsOne(t *testing.T) {
	r := runMain(t, "run", "fail-run", "--records", "100", "--checkpoint-mode", "none", "--log-level", "error")
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitFailure, r.stderr)
	}
	msg := lastLine(r.stderr)
	for _, want := range []string{"node: job fail-run failed", "picky", "seven is not allowed"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	if r.stdout != "" {
		t.Fatalf("stdout %q, want no summary for a failed job", r.stdout)
	}
}

// parseSummary decodes the single JSON object on stdout.
func parseSummary(t *testing.T, stdout string) map[string]any {
	t.Helper()
	if strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout is not one line: %q", stdout)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("summary %q: %v", stdout, err)
	}
	return m
}

func TestSummaryJSON(t *testing.T) {
	r := runMain(t, "run", "keycount", "--records", "5000", "--keys", "10", "--parallelism", "3",
		"--json", "--checkpoint-mode", "none", "--log-level", "warn")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	m := parseSummary(t, r.stdout)
	for k, want := range map[string]any{"job": "keycount", "parallelism": 3.0, "records_in": 5000.0, "records_out": 5000.0} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	for _, k := range []string{"duration_s", "records_per_s"} {
		if v, ok := m[k].(float64); !ok || v <= 0 {
			t.Errorf("%s = %v, want a positive number", k, m[k])
		}
	}
	if cps, ok := m["checkpoints"].([]any); !ok || len(cps) != 0 {
		t.Errorf("checkpoints = %v, want []", m["checkpoints"])
	}
	for _, k := range []string{"latency_p50_ms", "latency_p99_ms", "checkpoint_ms_p50", "checkpoint_ms_p95"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present without measurements", k)
		}
	}
}

func TestSummaryJSONWithLatency(t *testing.T) {
	r := runMain(t, "run", "backpressure", "--records", "5000", "--json", "--checkpoint-mode", "none", "--log-level", "warn")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	m := parseSummary(t, r.stdout)
	p50, ok1 := m["latency_p50_ms"].(float64)
	p99, ok2 := m["latency_p99_ms"].(float64)
	if !ok1 || !ok2 || p50 < 0 || p99 < p50 {
		t.Fatalf("latency p50 %v p99 %v, want 0 ≤ p50 ≤ p99", m["latency_p50_ms"], m["latency_p99_ms"])
	}
	if m["records_out"] != 5000.0 {
		t.Fatalf("records_out %v, want 5000", m["records_out"])
	}
}

func TestTextSummaryAndReport(t *testing.T) {
	r := runMain(t, "run", "report", "--records", "10", "--seed", "99", "--checkpoint-mode", "none", "--log-level", "warn")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	want := "report: 10 records in, 10 out in "
	if !strings.HasPrefix(r.stdout, want) || !strings.HasSuffix(r.stdout, "report: seed 99\n") {
		t.Fatalf("stdout %q, want the summary line then the report", r.stdout)
	}
	r = runMain(t, "run", "report", "--records", "10", "--json", "--checkpoint-mode", "none", "--log-level", "warn")
	if r.code != ExitOK || strings.Contains(r.stdout, "report: seed") {
		t.Fatalf("with --json: exit %d, stdout %q (want JSON only)", r.code, r.stdout)
	}
	parseSummary(t, r.stdout)
}

func TestFlagsAfterAndBeforeJob(t *testing.T) {
	r := runMain(t, "run", "--json", "--records", "100", "report", "--checkpoint-mode", "none", "--log-level", "warn")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	if m := parseSummary(t, r.stdout); m["records_in"] != 100.0 || m["job"] != "report" {
		t.Fatalf("summary %v, want report with 100 records", m)
	}
}

func TestLogsGoToStderr(t *testing.T) {
	r := runMain(t, "run", "report", "--records", "10", "--json", "--checkpoint-mode", "none")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	sawStart := false
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if ev["message"] == "job starting" && ev["job"] == "report" {
			sawStart = true
		}
	}
	if !sawStart {
		t.Fatalf("no job starting event in %q", r.stderr)
	}
	r = runMain(t, "run", "report", "--records", "10", "--checkpoint-mode", "none", "--pretty")
	if r.code != ExitOK || !strings.Contains(r.stderr, "job starting") || strings.Contains(r.stderr, `"message"`) || strings.Contains(r.stderr, "\x1b[") {
		t.Fatalf("--pretty: exit %d, stderr %q (want uncoloured console lines)", r.code, r.stderr)
	}
	r = runMain(t, "run", "report", "--records", "10", "--checkpoint-mode", "none", "--log-level", "error")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("--log-level error: exit %d, stderr %q (want nothing)", r.code, r.stderr)
	}
}

func TestOutFileTruncatedFirst(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(out, []byte("stale line 1\nstale line 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runMain(t, "run", "keycount", "--records", "1000", "--keys", "7", "--out", out, "--checkpoint-mode", "none", "--log-level", "warn")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	if n := countJSONLines(t, out); n != 1000 {
		t.Fatalf("%d lines, want 1000", n)
	}
}

func TestOutFileUnwritable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no-such-dir", "out.jsonl")
	r := runMain(t, "run", "keycount", "--records", "10", "--out", out, "--checkpoint-mode", "none")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "truncate output file") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the output file", r.code, r.stderr)
	}
}

// TestInterruptedRunStopsAndReports: an unbounded job whose context ends
// (an interrupt before it even starts) stops and prints its summary. Without
// checkpoints a stop drops what is in flight (records out ≤ in); with
// --drain the job processes everything it read first (out = in).
func TestInterruptedRunStopsAndReports(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drain bool
	}{{"stop", false}, {"drain", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // an interrupt before the job even starts
			args := []string{"run", "backpressure", "--records", "-1", "--json", "--checkpoint-mode", "none", "--log-level", "warn"}
			if tc.drain {
				args = append(args, "--drain")
			}
			done := make(chan result, 1)
			go func() {
				var out, errb bytes.Buffer
				code := MainContext(ctx, args, &out, &errb)
				done <- result{code, out.String(), errb.String()}
			}()
			select {
			case r := <-done:
				if r.code != ExitOK {
					t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
				}
				m := parseSummary(t, r.stdout)
				in, out := m["records_in"], m["records_out"]
				if tc.drain && in != out {
					t.Fatalf("records in %v out %v: a drained job processes what it read", in, out)
				}
				if !tc.drain && out.(float64) > in.(float64) {
					t.Fatalf("records in %v out %v: more out than in", in, out)
				}
			case <-time.After(time.Minute):
				t.Fatal("an unbounded job did not stop after its context ended")
			}
		})
	}
}

func TestDurationImpliesUnbounded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{nil, defaultRecords},
		{[]string{"--duration", "5s"}, weir.Unbounded},
		{[]string{"--duration", "5s", "--records", "300"}, 300},
		{[]string{"--records", "-1"}, weir.Unbounded},
	} {
		var f runFlags
		fs := newRunFlagSet(&f)
		if _, err := parseInterleaved(fs, tc.args); err != nil {
			t.Fatal(err)
		}
		f.set = map[string]bool{}
		fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
		if err := f.finish(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if f.params.Records != tc.want {
			t.Errorf("%v: records %d, want %d", tc.args, f.params.Records, tc.want)
		}
	}
}

func TestCheckpointFlagsPassThrough(t *testing.T) {
	var f runFlags
	fs := newRunFlagSet(&f)
	args := []string{"--checkpoint-mode", "aligned", "--aligned-timeout", "50ms", "--checkpoint-interval", "200ms",
		"--checkpoint-timeout", "5s", "--retain", "2", "--state-dir", "/tmp/x", "--restore", "17",
		"--max-concurrent-checkpoints", "3", "--max-inflight-bytes", "64MB", "--checkpoint-incremental", "--checkpoint-max-deltas", "5"}
	if _, err := parseInterleaved(fs, args); err != nil {
		t.Fatal(err)
	}
	if err := f.finish(); err != nil {
		t.Fatal(err)
	}
	want := weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 200 * time.Millisecond, Timeout: 5 * time.Second,
		AlignedTimeout: 50 * time.Millisecond, Retain: 2, MaxConcurrent: 3, MaxInflightBytes: 64_000_000, StateDir: "/tmp/x",
		IncrementalMaxDeltas: 5}
	if got := f.checkpointConfig(); got != want {
		t.Fatalf("checkpoint config %+v, want %+v", got, want)
	}
	if f.restore != "17" {
		t.Fatalf("restore %q, want 17", f.restore)
	}
	var d runFlags
	if _, err := parseInterleaved(newRunFlagSet(&d), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := d.checkpointConfig(), weir.DefaultCheckpointConfig(); got != want {
		t.Fatalf("default checkpoint config %+v, want the root package's %+v", got, want)
	}
}

// TestCheckpointIncrementalFlagDefault: node run's checkpoints are
// incremental unless --checkpoint-incremental=false asks for full ones;
// --checkpoint-async=false alone writes them whole (a synchronous snapshot
// cannot be incremental), and asking for both is an error.
func TestCheckpointIncrementalFlagDefault(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		full, sync bool
		err        string
	}{
		{args: nil},
		{args: []string{"--checkpoint-incremental"}},
		{args: []string{"--checkpoint-incremental=false"}, full: true},
		{args: []string{"--checkpoint-async=false"}, full: true, sync: true},
		{args: []string{"--checkpoint-async=false", "--checkpoint-incremental=false"}, full: true, sync: true},
		{args: []string{"--checkpoint-async=false", "--checkpoint-incremental"}, err: "--checkpoint-incremental needs --checkpoint-async"},
	} {
		f, err := parseRunFlags(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if c := f.checkpointConfig(); c.FullCheckpoints != tc.full || c.SyncSnapshots != tc.sync {
			t.Errorf("%v: full checkpoints %v, sync snapshots %v; want %v, %v", tc.args, c.FullCheckpoints, c.SyncSnapshots, tc.full, tc.sync)
		}
	}
}

// TestCheckpointDirectIOFlag: --checkpoint-direct-io is off by default and
// reaches the checkpoint configuration when given.
func TestCheckpointDirectIOFlag(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		direct bool
	}{{nil, false}, {[]string{"--checkpoint-direct-io"}, true}, {[]string{"--checkpoint-direct-io=false"}, false}} {
		f, err := parseRunFlags(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := f.checkpointConfig().DirectWrites; got != tc.direct {
			t.Errorf("%v: direct writes %v, want %v", tc.args, got, tc.direct)
		}
	}
}

func TestNewSummaryCheckpointQuantiles(t *testing.T) {
	res := &weir.Result{Job: "j", RecordsIn: 10, RecordsOut: 9, Duration: 2 * time.Second,
		LatencyCount: 3, LatencyP50: 1500 * time.Microsecond, LatencyP99: 4 * time.Millisecond}
	for i := 1; i <= 20; i++ {
		res.Checkpoints = append(res.Checkpoints, weir.CheckpointStat{ID: uint64(i), Mode: "unaligned", DurationMs: float64(i)})
	}
	s := NewSummary(res, 4)
	if s.RecordsPerS != 5 || s.DurationS != 2 || s.Parallelism != 4 {
		t.Fatalf("summary %+v", s)
	}
	if *s.LatencyP50Ms != 1.5 || *s.LatencyP99Ms != 4 {
		t.Fatalf("latency p50 %v p99 %v, want 1.5 and 4", *s.LatencyP50Ms, *s.LatencyP99Ms)
	}
	if *s.CheckpointMsP50 != 10 || *s.CheckpointMsP95 != 19 {
		t.Fatalf("checkpoint p50 %v p95 %v, want 10 and 19", *s.CheckpointMsP50, *s.CheckpointMsP95)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	m := parseSummary(t, b.String())
	if cps := m["checkpoints"].([]any); len(cps) != 20 || cps[0].(map[string]any)["duration_ms"] != 1.0 {
		t.Fatalf("checkpoints %v", m["checkpoints"])
	}
	b.Reset()
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "checkpoints: 20 completed, duration p50 10.000 ms, p95 19.000 ms") {
		t.Fatalf("text summary %q", b.String())
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 50, 7},
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{3, 1, 2}, 100, 3},
		{[]float64{4, 3, 2, 1}, 50, 2},
		{[]float64{4, 3, 2, 1}, 95, 4},
		{[]float64{4, 3, 2, 1}, 1, 1},
	} {
		if got := Percentile(tc.v, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.v, tc.p, got, tc.want)
		}
	}
}

func TestRegisterPanicsOnDuplicates(t *testing.T) {
	mustPanic := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		fn()
	}
	b := func(JobParams) (*weir.Graph, error) { return nil, nil }
	mustPanic("duplicate job", func() { Register("keycount", "again", b) })
	mustPanic("nil builder", func() { Register("nil-builder", "", nil) })
	mustPanic("bad name", func() { Register("-x", "", b) })
	cmd := func(context.Context, []string, io.Writer, io.Writer) int { return 0 }
	mustPanic("built-in command", func() { RegisterCommand("run", "", "", cmd) })
}

func TestRegisteredCommand(t *testing.T) {
	echoArgs = nil
	r := runMain(t, "echo-args", "a", "--b")
	got := echoArgs
	if r.code != 3 || r.stdout != "echoed\n" || fmt.Sprint(got) != "[a --b]" {
		t.Fatalf("exit %d, stdout %q, args %v", r.code, r.stdout, got)
	}
	if h := runMain(t, "help"); !strings.Contains(h.stdout, "echo-args [ARGS]") || !strings.Contains(h.stdout, "test command that records") {
		t.Fatalf("help lacks the registered command:\n%s", h.stdout)
	}
}

// countJSONLines checks every line of path is a keycount record and counts them.
func countJSONLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c keycount.Count
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.Key == "" || c.Count < 1 {
			t.Fatalf("line %d %q: not a count record (%v)", n+1, sc.Text(), err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNodeBinary builds cmd/node and runs keycount end to end as a user would.
func TestNodeBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to build the node binary: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "node")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/node")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/node: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out.jsonl")
	cmd := exec.CommandContext(ctx, bin, "run", "keycount", "--records", "20000", "--keys", "10", "--parallelism", "2",
		"--out", out, "--json", "--checkpoint-mode", "none")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node run keycount: %v\nstderr:\n%s", err, stderr.String())
	}
	m := parseSummary(t, stdout.String())
	for k, want := range map[string]any{"job": "keycount", "parallelism": 2.0, "records_in": 20000.0, "records_out": 20000.0} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	for _, k := range []string{"duration_s", "records_per_s", "checkpoints"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary lacks %s: %v", k, m)
		}
	}
	if n := countJSONLines(t, out); n != 20000 {
		t.Fatalf("output file has %d lines, want 20000", n)
	}

	// The binary's own usage errors: unknown job names the registered samples.
	bad := exec.CommandContext(ctx, bin, "run", "keycont")
	var badErr bytes.Buffer
	bad.Stderr = &badErr
	err = bad.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitUsage {
		t.Fatalf("node run keycont: %v, want exit status %d", err, ExitUsage)
	}
	// The list is every registered job, sorted: it grows with the samples.
	if got, want := badErr.String(), "node: unknown job \"keycont\" (known: backpressure, bigstate, "; !strings.HasPrefix(got, want) ||
		!strings.Contains(got, ", keycount, keysum, ") || !strings.HasSuffix(got, ", wordcount)\n") {
		t.Fatalf("stderr %q, want the unknown name and the sorted list of jobs (backpressure, bigstate, … keycount, keysum, … wordcount)", got)
	}
}

func TestCheckpointedRunReportsCheckpoints(t *testing.T) {
	dir := t.TempDir()
	r := runMain(t, "run", "keycount", "--records", "50000", "--keys", "10", "--json", "--log-level", "warn",
		"--checkpoint-mode", "aligned", "--checkpoint-interval", "10ms", "--state-dir", filepath.Join(dir, "state"))
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	m := parseSummary(t, r.stdout)
	cps, _ := m["checkpoints"].([]any)
	if len(cps) == 0 {
		t.Fatalf("no checkpoints reported: %v", m)
	}
	if cp := cps[0].(map[string]any); cp["mode"] != "aligned" {
		t.Fatalf("checkpoint %v, want mode aligned", cp)
	}
	for _, k := range []string{"checkpoint_ms_p50", "checkpoint_ms_p95"} {
		if _, ok := m[k].(float64); !ok {
			t.Fatalf("summary lacks %s: %v", k, m)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err != nil {
		t.Fatalf("--state-dir not used: %v", err)
	}
}
