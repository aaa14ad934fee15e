package main

import (
	"encoding/json"
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

// TestRecoveryNodeArgs: every node of a run gets --local-recovery=false
// only with local recovery off, and --checkpoint-direct-io only when the
// bench was given it; the table's first line says which copies it measured.
func TestRecoveryNodeArgs(t *testing.T) {
	cfg := recoveryBenchConfig{LocalWait: 30 * time.Second}
	for _, c := range []struct {
		direct, local bool
		want          string
	}{
		{false, true, "--local-wait 30s"},
		{false, false, "--local-wait 30s --local-recovery=false"},
		{true, true, "--local-wait 30s --checkpoint-direct-io"},
		{true, false, "--local-wait 30s --local-recovery=false --checkpoint-direct-io"},
	} {
		cfg.DirectIO = c.direct
		if got := strings.Join(recoveryNodeArgs(cfg, c.local), " "); got != c.want {
			t.Errorf("direct %v, local %v: node args %q, want %q", c.direct, c.local, got, c.want)
		}
		var sb strings.Builder
		writeRecoveryTable(&sb, cfg, &recoveryBenchResult{})
		if first, _, _ := strings.Cut(sb.String(), "\n"); strings.Contains(first, "--checkpoint-direct-io") != c.direct {
			t.Errorf("direct %v: first line %q", c.direct, first)
		}
	}
}
