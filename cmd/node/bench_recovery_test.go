package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFullCheckpoint: the benchmark waits for the newest checkpoint whose
// state, summed over the nodes' local copies, reaches the job's size.
func TestFullCheckpoint(t *testing.T) {
	var s statusView
	if err := json.Unmarshal([]byte(`{"nodes":[
		{"node":"n1","local_state":[{"job":"bigstate","checkpoint":3,"bytes":40},{"job":"bigstate","checkpoint":4,"bytes":60},{"job":"other","checkpoint":9,"bytes":500}]},
		{"node":"n2","local_state":[{"job":"bigstate","checkpoint":3,"bytes":70},{"job":"bigstate","checkpoint":4,"bytes":30}]},
		{"node":"n3","local_state":[{"job":"bigstate","checkpoint":5,"bytes":90}]}]}`), &s); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target   int64
		id       uint64
		heldSize int64
	}{{90, 5, 90}, {91, 3, 110}, {110, 3, 110}, {111, 0, 0}} {
		id, held := fullCheckpoint(s, "bigstate", c.target)
		if id != c.id || held != c.heldSize {
			t.Errorf("target %d: checkpoint %d with %d bytes, want %d with %d", c.target, id, held, c.id, c.heldSize)
		}
	}
}

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

// TestRecoveryTableComparesMedians: the summary compares the medians of the
// rounds, not one restart of each kind.
func TestRecoveryTableComparesMedians(t *testing.T) {
	res := &recoveryBenchResult{Keys: 10, ValueBytes: 1}
	for i, ms := range []float64{100, 900, 120} {
		res.Cases = append(res.Cases,
			recoveryCase{Restart: restartOne, LocalRecovery: true, Round: i + 1, ToRunningS: ms / 100, RestoreMs: ms, InstalledMs: ms / 2, DecodedMs: ms},
			recoveryCase{Restart: restartOne, LocalRecovery: false, Round: i + 1, ToRunningS: 6, RestoreMs: 600, InstalledMs: 480, DecodedMs: 960})
	}
	var sb strings.Builder
	writeRecoveryTable(&sb, recoveryBenchConfig{Keys: 10, ValueBytes: 1, Parallelism: 1, Mode: "aligned", Interval: time.Second}, res)
	want := "one node with local recovery (medians of 3 and 3 rounds): restart → running 5.0× faster (1.20 s vs 6.00 s), restores 5.0× faster (120 ms vs 600 ms summed over tasks), every task running 8.0× sooner (60 ms vs 480 ms), every key group decoded 8.0× sooner (120 ms vs 960 ms)"
	if !strings.Contains(sb.String(), want) {
		t.Fatalf("table:\n%s\nwant a line %q", sb.String(), want)
	}
}
