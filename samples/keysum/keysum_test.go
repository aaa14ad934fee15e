package keysum

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestKeysumSameAtEveryParallelism runs keysum at parallelism 1, 2 and 4
// with aligned checkpoints and checks that each output passes Verify and
// that the outputs are the same per key.
func TestKeysumSameAtEveryParallelism(t *testing.T) {
	const n, k = 8000, 40
	var first map[string][]string
	for _, p := range []int{1, 2, 4} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		g, err := Build(Config{Records: n, Keys: k, Parallelism: p, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
			Mode: weir.CheckpointAligned, Interval: 10 * time.Millisecond, StateDir: filepath.Join(t.TempDir(), "state")})); err != nil {
			t.Fatalf("p=%d: %v", p, err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(bytes.NewReader(data), n, k); err != nil {
			t.Fatalf("p=%d: %v", p, err)
		}
		perKey := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			key := line[:strings.Index(line, ",")]
			perKey[key] = append(perKey[key], line)
		}
		if first == nil {
			first = perKey
			continue
		}
		if fmt.Sprint(perKey) != fmt.Sprint(first) {
			t.Fatalf("p=%d: per-key output differs from p=1", p)
		}
	}
}

// TestVerifyNamesTheFault feeds Verify outputs with one fault each.
func TestVerifyNamesTheFault(t *testing.T) {
	line := func(key string, count, sum int64) string {
		return fmt.Sprintf("{\"key\":%q,\"count\":%d,\"sum\":%d}\n", key, count, sum)
	}
	// Keys k000000 and k000001, two records each: seqs 0, 2 and 1, 3.
	good := line("k000000", 1, Weight(0)) + line("k000001", 1, Weight(1)) +
		line("k000000", 2, Weight(0)+Weight(2)) + line("k000001", 2, Weight(1)+Weight(3))
	if err := Verify(strings.NewReader(good), 4, 2); err != nil {
		t.Fatalf("good output: %v", err)
	}
	cases := map[string]struct {
		out  string
		want string
	}{
		"repeated":  {good + line("k000000", 2, Weight(0)+Weight(2)), "repeated"},
		"missing":   {line("k000000", 2, Weight(0)+Weight(2)), "missing"},
		"wrong sum": {line("k000000", 1, Weight(2)), "sum"},
		"short":     {good[:strings.LastIndex(good[:len(good)-1], "\n")+1], "3 lines, want 4"},
		"bad key":   {line("x", 1, 1), "unknown key"},
		"not json":  {"{\n", "line 1"},
	}
	for name, c := range cases {
		err := Verify(strings.NewReader(c.out), 4, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

// TestBuildRejectsBadConfig checks the configuration errors.
func TestBuildRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{Records: 10, Keys: 3, Parallelism: 2, Out: "o"},
		{Records: -1, Keys: 4, Parallelism: 2, Out: "o"},
		{Records: 10, Keys: 4, Parallelism: 0, Out: "o"},
		{Records: 10, Keys: 4, Parallelism: 2},
		{Records: 10, Keys: 4, Parallelism: 2, Out: "o", SleepMs: -1},
	} {
		if _, err := Build(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
