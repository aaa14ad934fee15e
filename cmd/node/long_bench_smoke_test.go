//go:build long

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/samples/nexmark"
)

// TestBenchRecoverySmoke runs `node bench recovery` on a small state, one
// round: with local recovery on, the restarted node and the restarted
// cluster read nothing remotely; with it off, nothing locally; the
// whole-cluster restart restores a newer checkpoint than the one-node one.
func TestBenchRecoverySmoke(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	svg := filepath.Join(t.TempDir(), "recovery.svg")
	out, err := exec.Command(bin, "bench", "recovery", "--keys", "1000", "--value-bytes", "64", "--checkpoint-interval", "300ms",
		"--sleep-ms", "0.05", "--timeout", "90s", "--rounds", "1", "--json", "--plot", svg).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node bench recovery: %v\n%s", err, lastBytes(string(stderr), 6000))
	}
	var res recoveryBenchResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if len(res.Cases) != 4 {
		t.Fatalf("%d cases, want 4: %s", len(res.Cases), out)
	}
	for i, c := range res.Cases {
		if want := 1 + i/4; c.Round != want {
			t.Errorf("case %d: round %d, want %d", i, c.Round, want)
		}
		if i%2 > 0 && c.Checkpoint <= res.Cases[i-1].Checkpoint {
			t.Errorf("case %d restored checkpoint %d, not newer than the one before (%d)", i, c.Checkpoint, res.Cases[i-1].Checkpoint)
		}
		if c.TaskRestores == 0 || c.ToRunningS <= 0 || c.InstalledMs <= 0 || c.StateBytes < 1000*64 {
			t.Errorf("%s, local recovery %v: %+v: want restores, a time and the state filled", c.Restart, c.LocalRecovery, c)
		}
		if c.LocalRecovery && (c.RemoteBytes != 0 || c.LocalBytes == 0) {
			t.Errorf("%s with local recovery: %d bytes local, %d remote: want all local", c.Restart, c.LocalBytes, c.RemoteBytes)
		}
		if !c.LocalRecovery && (c.LocalBytes != 0 || c.RemoteBytes == 0) {
			t.Errorf("%s without local recovery: %d bytes local, %d remote: want all remote", c.Restart, c.LocalBytes, c.RemoteBytes)
		}
	}
	chart, err := os.ReadFile(svg)
	if err != nil {
		t.Fatalf("--plot: %v", err)
	}
	for _, series := range []string{"one node, local recovery on", "whole cluster, local recovery on", "one node, local recovery off", "whole cluster, local recovery off", "SIGKILL"} {
		if !strings.Contains(string(chart), series) {
			t.Errorf("the --plot chart has no %q", series)
		}
	}
	t.Logf("%s", out)
}

// TestBenchNexmarkAll: --query all runs every query in a child process and
// prints one row each.
func TestBenchNexmarkAll(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(buildNode(t), "bench", "nexmark", "--query", "all", "--events", "20000", "--json").Output()
	if err != nil {
		t.Fatalf("node bench nexmark --query all: %v", err)
	}
	var got []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var row nexmarkBenchRow
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("rows %q: %v", out, err)
		}
		if row.Events != 20000 || row.EventsPerCore <= 0 {
			t.Fatalf("row %+v", row)
		}
		got = append(got, row.Query)
	}
	if !slices.Equal(got, nexmark.Queries()) {
		t.Fatalf("queries %v, want %v", got, nexmark.Queries())
	}
}

// TestBenchStateRows: `node bench state --json --rounds 2` at tiny sizes
// gives one row per cell and share of changing keys, with checkpoints and their bytes, and
// the cores busy in the held and on phases, in the cells that take them (no speed is asserted: each run measures until
// a checkpoint completed, however slow the machine).
func TestBenchStateRows(t *testing.T) {
	t.Parallel()
	rows := stateBenchRows(t, "--changing", "1,100", "--cells", "none,async,incr,sync", "--rounds", "2")
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if r.Rounds != 2 {
			t.Fatalf("row %+v: want the medians of 2 rounds", r)
		}
		if r.RecordsPerS <= 0 || r.PacedRate <= 0 || r.PacedKeptPct <= 0 {
			t.Fatalf("row %+v: want a throughput, a paced rate and the share of it kept", r)
		}
		if r.Name == "none" {
			if r.Checkpoints != 0 || r.VsNonePct != 100 || r.VsHeldPct != 0 || r.P99VsHeld != 0 || r.CoresBusy != nil {
				t.Fatalf("row %+v: no checkpoints (nor any to hold) without them, 100 %% of itself", r)
			}
			continue
		}
		if r.Checkpoints < 1 || r.BytesPerCkpt <= 0 || r.FullStateBytes <= 0 {
			t.Fatalf("row %+v: want checkpoints and their bytes", r)
		}
		if r.VsHeldPct <= 0 || r.P99VsHeld <= 0 {
			t.Fatalf("row %+v: want throughput and p99 against the job's held phases", r)
		}
		if c := r.CoresBusy; c == nil || c.Fast == nil || c.Paced == nil || c.Fast.Held.Process <= 0 || c.Paced.Held.Process <= 0 {
			t.Fatalf("row %+v: want the cores busy in both runs' held phases", r)
		}
	}
}

// TestBenchStatePacedRate: --paced-rate paces the latency runs at that
// rate, not at a share of the throughput.
func TestBenchStatePacedRate(t *testing.T) {
	t.Parallel()
	rows := stateBenchRows(t, "--changing", "100", "--cells", "none,incr", "--paced-rate", "3000")
	for _, r := range rows {
		if r.PacedRate != 3000 {
			t.Fatalf("row %+v: paced at %v records/s, want 3000", r, r.PacedRate)
		}
	}
}

// stateBenchRows runs `node bench state` small (2000 keys of 32 bytes,
// 300 ms windows, checkpoints every 50 ms, two pairs of 100 ms held and on
// phases) with args and returns its rows.
func stateBenchRows(t *testing.T, args ...string) []stateBenchRow {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--keys", "2000", "--value-bytes", "32", "--duration", "300ms", "--checkpoint-interval", "50ms", "--hold-pairs", "2", "--hold-phase", "100ms", "--json"}, args...)
	if code := runStateBench(context.Background(), args, &out, &errb); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []stateBenchRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("rows %q: %v", out.String(), err)
	}
	return rows
}

// TestBenchRescaleSmoke runs `node bench rescale` small: both cases have
// their two rescales, the live ones moved what the planner moves, the
// restored jobs delivered, throughput and latencies are there, and the plot
// is written. It asserts nothing about speed.
func TestBenchRescaleSmoke(t *testing.T) {
	t.Parallel()
	svg := filepath.Join(t.TempDir(), "rescale.svg")
	var stdout, stderr bytes.Buffer
	code := runRescaleBench(context.Background(), []string{"--keys", "1000", "--rate", "5000", "--warmup", "200ms", "--steady", "500ms",
		"--between", "1s", "--checkpoint-interval", "200ms", "--json", "--plot", svg}, &stdout, &stderr)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, lastBytes(stderr.String(), 6000))
	}
	var res rescaleBenchResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	if len(res.Cases) != 2 || res.Cases[0].Case != caseLive || res.Cases[1].Case != caseRestore {
		t.Fatalf("cases %+v, want live then stop-and-restore", res.Cases)
	}
	for _, c := range res.Cases {
		if len(c.RecordsPerS) != 27 { // 0.2 + 0.5 + 2 × 1 s in 100 ms buckets
			t.Errorf("%s: %d throughput buckets, want 27", c.Case, len(c.RecordsPerS))
		}
		if c.Failures != 0 {
			t.Errorf("%s: %d task failures", c.Case, c.Failures)
		}
		if c.SteadyPerS <= 0 {
			t.Errorf("%s: steady throughput %v", c.Case, c.SteadyPerS)
		}
		if runtime.GOOS == "linux" && c.CPUWaitMsPerS == nil {
			t.Errorf("%s: no cpu wait in the steady window", c.Case)
		}
		if len(c.Steps) != 2 || c.Steps[0].From != 2 || c.Steps[0].To != 3 || c.Steps[1].From != 3 || c.Steps[1].To != 2 {
			t.Fatalf("%s: rescales %+v, want 2→3 and 3→2", c.Case, c.Steps)
		}
		for _, s := range c.Steps {
			if runtime.GOOS == "linux" && (s.CPUWaitMs == nil || *s.CPUWaitMs < 0) {
				t.Errorf("%s %d→%d: cpu wait %v, want a figure", c.Case, s.From, s.To, s.CPUWaitMs)
			}
			if s.Moved != 42 || s.Minimum != 42 || s.TookMs <= 0 || s.RequestS <= 0 {
				t.Errorf("%s %d→%d: %+v: want 42 of 42 key groups moved and a time", c.Case, s.From, s.To, s)
			}
			if s.Before.Unmoved.Records == 0 || s.Before.Moved.Records == 0 || s.During.Unmoved.Records == 0 || s.During.Moved.Records == 0 {
				t.Errorf("%s %d→%d: latencies %+v before, %+v during: want records of moved and unmoved keys in both", c.Case, s.From, s.To, s.Before, s.During)
			}
			if s.During.Unmoved.P99Ms < s.During.Unmoved.P50Ms || s.During.Unmoved.P50Ms < 0 {
				t.Errorf("%s %d→%d: unmoved latency %+v", c.Case, s.From, s.To, s.During.Unmoved)
			}
		}
	}
	for _, s := range res.Cases[0].Steps {
		if s.Runtime == nil || s.Runtime.FromSourceBefore.Records == 0 {
			t.Errorf("live %d→%d: the runtime's flow figures %+v: want its latency from the source before the rescale", s.From, s.To, s.Runtime)
		}
	}
	if res.Cases[0].Steps[0].Bytes == 0 {
		t.Errorf("the live rescale handed off no state: %+v", res.Cases[0].Steps[0])
	}
	if res.Cases[1].Steps[0].StopMs <= 0 {
		t.Errorf("stop-and-restore has no stop time: %+v", res.Cases[1].Steps[0])
	}
	if len(res.Targets) != 4 {
		t.Errorf("targets %+v, want 4", res.Targets)
	}
	chart, err := os.ReadFile(svg)
	if err != nil {
		t.Fatalf("--plot: %v", err)
	}
	for _, want := range []string{caseLive, caseRestore, "count 2→3", "count 3→2", "<polyline"} {
		if !strings.Contains(string(chart), want) {
			t.Errorf("the --plot chart has no %q", want)
		}
	}
	t.Logf("%s", stdout.String())
}
