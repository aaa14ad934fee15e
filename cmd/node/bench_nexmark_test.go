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

// q2Count is how many bids of the first n events Q2 selects, counted
// straightforwardly.
func q2Count(t *testing.T, seed, n int64) int64 {
	t.Helper()
	gen, err := nexmark.NewGenerator(nexmark.DefaultConfig(seed))
	if err != nil {
		t.Fatal(err)
	}
	var c int64
	for i := range n {
		if e := gen.Event(i); e.Kind == nexmark.KindBid && e.Bid.Auction%nexmark.Q2AuctionSkip == 0 {
			c++
		}
	}
	return c
}

// TestBenchNexmarkRow: `node bench nexmark --json` runs the query over the
// events asked for and reports its results, CPU time and memory.
func TestBenchNexmarkRow(t *testing.T) {
	const n = 200_000
	var out, errb bytes.Buffer
	code := runNexmarkBench(context.Background(), []string{"--query", "q2", "--events", "200000", "--seed", "3", "--json"}, &out, &errb)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var row nexmarkBenchRow
	if err := json.Unmarshal(out.Bytes(), &row); err != nil {
		t.Fatalf("row %q: %v", out.String(), err)
	}
	if want := q2Count(t, 3, n); row.Results != want || row.Events != n {
		t.Fatalf("row %+v: want %d events and %d results", row, n, want)
	}
	if row.CPUSeconds <= 0 || row.EventsPerCore <= 0 || row.MaxRSSMB <= 0 || row.Checkpoints < 1 {
		t.Fatalf("row %+v: want CPU time, a rate per core, peak memory and the final checkpoint", row)
	}
}

// TestBenchNexmarkBadFlags: an unknown query and bad sizes are usage errors.
func TestBenchNexmarkBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--query", "q6", "--events", "10"},
		{"--events", "0"},
		{"--query", "all", "--cpuprofile", "x"},
	} {
		var out, errb bytes.Buffer
		if code := runNexmarkBench(context.Background(), args, &out, &errb); code == cli.ExitOK {
			t.Errorf("%v: exit 0, want an error", args)
		} else if !strings.Contains(errb.String(), "nexmark") {
			t.Errorf("%v: error %q does not name the command", args, errb.String())
		}
	}
}

// TestRunNexmarkWritesResults: `node run nexmark --query q2 --out` writes
// one JSON line per selected bid.
func TestRunNexmarkWritesResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outFile := filepath.Join(dir, "q2.jsonl")
	cmd := exec.Command(buildNode(t), "run", "nexmark", "--query", "q2", "--events", "100000", "--seed", "5",
		"--out", outFile, "--state-dir", filepath.Join(dir, "state"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node run nexmark: %v\n%s", err, out)
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := slices.DeleteFunc(strings.Split(string(data), "\n"), func(s string) bool { return s == "" })
	if want := q2Count(t, 5, 100_000); int64(len(lines)) != want {
		t.Fatalf("%d lines, want %d", len(lines), want)
	}
	var ap nexmark.AuctionPrice
	if err := json.Unmarshal([]byte(lines[0]), &ap); err != nil || ap.Auction%nexmark.Q2AuctionSkip != 0 {
		t.Fatalf("line %q: %+v, %v", lines[0], ap, err)
	}
}

func TestWithoutFlag(t *testing.T) {
	got := withoutFlag([]string{"--query", "all", "--events", "5", "-query=q1", "--query=q2", "--queryx", "1"}, "query")
	if want := []string{"--events", "5", "--queryx", "1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
