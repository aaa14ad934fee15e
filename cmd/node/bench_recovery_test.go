package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// TestBenchRecoverySmoke runs `node bench recovery` on a small state: with
// local recovery on, the restarted node and the restarted cluster read
// nothing remotely; with it off, nothing locally.
func TestBenchRecoverySmoke(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	svg := filepath.Join(t.TempDir(), "recovery.svg")
	out, err := exec.Command(bin, "bench", "recovery", "--keys", "1000", "--value-bytes", "64", "--checkpoint-interval", "300ms",
		"--sleep-ms", "0.05", "--timeout", "90s", "--json", "--plot", svg).Output()
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
	for _, c := range res.Cases {
		if c.TaskRestores == 0 || c.ToRunningS <= 0 || c.StateBytes < 1000*64 {
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
