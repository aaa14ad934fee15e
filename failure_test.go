package weir_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// panicky builds keycount with a map stage whose function panics on the first
// record at or after failAt that it sees once a checkpoint of the job is
// committed under stateDir, while *armed is set. Waiting for a committed
// checkpoint keeps the test independent of how fast the machine is.
func panicky(out, stateDir string, n int64, failAt int64, armed *atomic.Bool) *weir.Graph {
	g := weir.NewGraph("keycount")
	keys := keycount.Keys(10)
	events := weir.Generate(g, "source", n, func(i int64) keycount.Event {
		return keycount.Event{Key: keys[i%10], Seq: i}
	}, weir.Parallelism(2))
	checked := weir.Map(events, "check", func(e keycount.Event) keycount.Event {
		if e.Seq >= failAt && armed.Load() && committed(stateDir) {
			panic("bad record")
		}
		return e
	}, weir.Parallelism(2))
	counts := weir.NewValueState[int64](g, "count")
	sleeper := []*weir.Sleeper{weir.NewSleeper(50 * time.Microsecond), weir.NewSleeper(50 * time.Microsecond)}
	res := weir.Process(weir.KeyBy(checked, func(e keycount.Event) string { return e.Key }), "count",
		func(ctx *weir.KeyedContext[string], e keycount.Event, o *weir.Emitter[keycount.Count]) error {
			sleeper[ctx.Instance()].Tick()
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			o.Emit(keycount.Count{Key: e.Key, Count: c})
			return nil
		}, weir.WithState(counts), weir.Parallelism(2))
	weir.ToSink(res, "sink", weir.FileSink[keycount.Count](out))
	return g
}

// committed reports whether a checkpoint manifest of job keycount exists.
func committed(stateDir string) bool {
	m, _ := filepath.Glob(filepath.Join(stateDir, "keycount", "chk-*", "_manifest"))
	return len(m) > 0
}

// TestPanicFailsJobThenRestoreCompletes: with --max-restarts 0 a panicking user
// function fails the job with an error naming the operator, the instance, the
// record and the cause; restoring from the latest checkpoint then finishes the
// job with exactly-once output.
func TestPanicFailsJobThenRestoreCompletes(t *testing.T) {
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	const n = 40000
	var armed atomic.Bool
	armed.Store(true)
	cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: stateDir}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts = 0
	_, err := weir.Run(context.Background(), panicky(out, stateDir, n, 10000, &armed), weir.WithCheckpoints(cc), weir.WithSupervision(sup))
	if err == nil {
		t.Fatal("the job did not fail")
	}
	for _, want := range []string{"check[", `operator "check"`, "Seq:", "bad record"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %s", err, want)
		}
	}
	var re *weir.RecordError
	if !errors.As(err, &re) && !strings.Contains(err.Error(), "panic: bad record") {
		t.Fatalf("error %v carries no record error", err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "keycount")); err != nil {
		t.Fatalf("the failed job left no checkpoint: %v", err)
	}

	armed.Store(false) // the bug is fixed; resume
	restoreLatest(t, panicky(out, stateDir, n, 10000, &armed), weir.WithCheckpoints(cc))
	verifyKeycount(t, out, n, 10)
}
