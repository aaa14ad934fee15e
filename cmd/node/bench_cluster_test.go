package main

import (
	"testing"
	"time"
)

// TestKillVictim checks whom a kill trial of `node bench cluster` kills:
// the coordinator's node unless it is n1 (the NATS server's), or a node
// with tasks that is neither the coordinator's nor n1.
func TestKillVictim(t *testing.T) {
	tasks := map[string]string{"source[0]": "n1", "count[0]": "n1", "source[1]": "n3", "count[1]": "n3"}
	cases := []struct {
		name  string
		job   jobStatusView
		coord bool
		want  string
	}{
		{"coordinator n2", jobStatusView{Coordinator: "n2", Tasks: tasks}, true, "n2"},
		{"coordinator n1 runs NATS", jobStatusView{Coordinator: "n1", Tasks: tasks}, true, ""},
		{"worker of coordinator n1", jobStatusView{Coordinator: "n1", Tasks: tasks}, false, "n3"},
		{"worker: the coordinator's node is not one", jobStatusView{Coordinator: "n3", Tasks: tasks}, false, ""},
		{"worker: lowest id first", jobStatusView{Coordinator: "n1", Tasks: map[string]string{"a": "n4", "b": "n2"}}, false, "n2"},
	}
	for _, c := range cases {
		if got := killVictim(c.job, c.coord); got != c.want {
			t.Errorf("%s: victim %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRecoveryFigures checks the per-kind recovery figures: totals,
// detection and restore (total less detection), each with p50 and max.
func TestRecoveryFigures(t *testing.T) {
	var f recoveryFigures
	for _, r := range []recovery{{Detect: 1 * time.Second, Total: 3 * time.Second}, {Detect: 0, Total: time.Second}, {Detect: 2 * time.Second, Total: 2 * time.Second}} {
		f.add(r)
	}
	if len(f.S) != 3 || f.S[0] != 3 || f.P50S != 2 || f.MaxS != 3 {
		t.Fatalf("totals %+v: want the times in trial order, p50 2 s, max 3 s", f)
	}
	if f.DetectP != 1 || f.DetectM != 2 || f.RestoreS[0] != 2 || f.RestoreP != 1 || f.RestoreM != 2 {
		t.Fatalf("split %+v: want detection p50 1 s max 2 s, restore [2 1 0] p50 1 s max 2 s", f)
	}
}
