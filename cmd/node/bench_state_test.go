package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/weirstream/weir/cli"
)

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
		if r.RecordsPerS <= 0 || r.PacedRate <= 0 {
			t.Fatalf("row %+v: want a throughput and a paced rate", r)
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

// TestBenchStateBadFlags: bad sizes, shares and cells are usage errors.
func TestBenchStateBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--keys", "0"},
		{"--value-bytes", "0"},
		{"--changing", "0"},
		{"--changing", "101"},
		{"--cells", "fast"},
		{"--checkpoint-mode", "none"},
		{"--paced-share", "0"},
		{"--min-checkpoints", "-1"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := runStateBench(context.Background(), args, &out, &errb); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want usage (%s)", args, code, errb.String())
		}
	}
}

// TestChangedGroupsPct: one hot key changes one key group of 128; every key
// of a million changing changes them all, and so does 1 % of them (about
// 78 changed keys in each group).
func TestChangedGroupsPct(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		keys int
		pct  float64
		want float64
	}{{1000, 0.1, 100.0 / 128}, {1_000_000, 100, 100}, {1_000_000, 1, 100}} {
		if got := changedGroupsPct(c.keys, c.pct); got != c.want {
			t.Errorf("%d keys, %v %% changing: %v %% of groups, want %v", c.keys, c.pct, got, c.want)
		}
	}
}
