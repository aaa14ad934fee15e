package nexmark

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/testseed"
)

// TestWindowedAndJoinQueriesExactlyOnceUnderActorKills: q5 (sliding
// windows, then a keyed top per window) and q3 (a two-input join with
// timers) under random task and channel kills with unaligned checkpoints
// write exactly the results of the straightforward computation, each once,
// to their checkpointed file sink.
func TestWindowedAndJoinQueriesExactlyOnceUnderActorKills(t *testing.T) {
	t.Parallel()
	gen := testGenerator(t)
	events := refEvents(gen, testEvents)
	for _, tc := range []struct {
		query string
		want  func() []string
	}{
		{"q5", func() []string {
			return jsonLines(t, refQ5(events, WindowSize.Milliseconds(), WindowPeriod.Milliseconds()))
		}},
		{"q3", func() []string { return jsonLines(t, refQ3(events)) }},
	} {
		t.Run(tc.query, func(t *testing.T) {
			testseed.Run(t, 1, 1, func(seed uint64) {
				t.Logf("chaos seed %d", seed)
				got := runUnderKills(t, gen, tc.query, int64(seed))
				sameSet(t, tc.query+" under kills", got, tc.want())
			})
		})
	}
}

// runUnderKills runs query over the test events at parallelism 2, slowed
// to about a second, with an actor killed every 50 ms, and returns the
// lines its file sink committed.
func runUnderKills(t *testing.T, gen *Generator, query string, seed int64) []string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	build := func() *weir.Graph {
		g := weir.NewGraph("nexmark-"+query+"-kills", weir.WithParallelism(2))
		queries[query](slowed(Source(g, gen, testEvents), 20*time.Microsecond), Output{File: out})
		return g
	}
	cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: filepath.Join(dir, "state")}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts = 1000 // every kill restarts; the test is about what comes out
	sup.ChaosKillEvery, sup.ChaosSeed = 50*time.Millisecond, seed
	var logs logbuf.Buffer // the run's log, shown only if the test fails
	defer func() {
		if t.Failed() {
			t.Logf("the run's log:\n%s", logs.String())
		}
	}()
	logger := zerolog.New(&logs).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := weir.Run(ctx, build(), weir.WithCheckpoints(cc), weir.WithSupervision(sup), weir.WithLogger(logger))
	if err != nil && strings.Contains(err.Error(), "after the final checkpoint") {
		// A kill between the final checkpoint and its commit fails the run by
		// design, keeping the checkpoint: a restore finishes it.
		t.Logf("killed while ending (%v): restoring", err)
		res, err = weir.Run(ctx, build(), weir.WithCheckpoints(cc), weir.WithRestore("latest"), weir.WithLogger(logger))
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Kills == 0 && res.RestoredFrom == 0 {
		t.Fatal("no actor was killed")
	}
	t.Logf("%d kills, %d restarts, %d checkpoints", res.Kills, res.Restarts, len(res.Checkpoints))
	return readLines(t, out)
}

// jsonLines is each record as the file sink writes it.
func jsonLines[T any](t *testing.T, recs []T) []string {
	t.Helper()
	out := make([]string, len(recs))
	for i, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// readLines is the lines of the file at path.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
