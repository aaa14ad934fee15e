//go:build long

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

// TestBenchStateRows: `node bench state --json` at tiny sizes gives one row
// per cell and share of changing keys, with checkpoints and their bytes in
// the cells that take them (no speed is asserted: each run measures until
// a checkpoint completed, however slow the machine).
func TestBenchStateRows(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	args := []string{"--keys", "2000", "--value-bytes", "32", "--duration", "300ms", "--checkpoint-interval", "50ms",
		"--changing", "1,100", "--cells", "none,async,incr,sync", "--json"}
	if code := runStateBench(context.Background(), args, &out, &errb); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []stateBenchRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("rows %q: %v", out.String(), err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if r.RecordsPerS <= 0 || r.PacedRate <= 0 || r.PacedKeptPct <= 0 {
			t.Fatalf("row %+v: want a throughput, a paced rate and the share of it kept", r)
		}
		if r.Name == "none" {
			if r.Checkpoints != 0 || r.VsNonePct != 100 {
				t.Fatalf("row %+v: no checkpoints without them, 100 %% of itself", r)
			}
			continue
		}
		if r.Checkpoints < 1 || r.BytesPerCkpt <= 0 || r.FullStateBytes <= 0 {
			t.Fatalf("row %+v: want checkpoints and their bytes", r)
		}
	}
}
