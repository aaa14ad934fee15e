package weir_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// countingSource generates keycount events and counts how often it is opened.
type countingSource struct {
	opens *atomic.Int32
	n     int64
	pos   int64
	slow  *weir.Sleeper // slow enough that several checkpoints complete
}

func (s *countingSource) Open(weir.TaskInfo) error { s.opens.Add(1); return nil }
func (s *countingSource) Close() error             { return nil }
func (s *countingSource) Offset() int64            { return s.pos }
func (s *countingSource) SeekTo(o int64) error     { s.pos = o; return nil }
func (s *countingSource) Read(buf []keycount.Event) (int, bool, error) {
	i := 0
	for ; i < len(buf) && s.pos < s.n; i++ {
		buf[i] = keycount.Event{Key: "k", Seq: s.pos}
		s.pos++
		s.slow.Tick()
	}
	return i, s.pos >= s.n, nil
}

// TestIndependentRegionKeepsRunning runs two unconnected pipelines in one job.
// A task of the first fails once; only its region restarts from the latest
// checkpoint while the second pipeline's tasks keep running (never reopened),
// and both outputs are exactly once.
func TestIndependentRegionKeepsRunning(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	g := weir.NewGraph("two-pipelines")
	var opensA, opensB atomic.Int32
	var armed atomic.Bool
	armed.Store(true)
	pipeline := func(name string, opens *atomic.Int32, fail bool) string {
		src := weir.FromSource(g, name+"-source", func(int) weir.Source[keycount.Event] {
			return &countingSource{opens: opens, n: n, slow: weir.NewSleeper(2 * time.Microsecond)}
		})
		counts := weir.NewValueState[int64](g, name+"-count")
		out := weir.Process(weir.KeyBy(src, func(e keycount.Event) string { return e.Key }), name+"-count",
			func(ctx *weir.KeyedContext[string], e keycount.Event, o *weir.Emitter[keycount.Count]) error {
				if fail && e.Seq == n/2 && armed.CompareAndSwap(true, false) {
					panic("injected failure")
				}
				c := counts.Get(ctx) + 1
				counts.Set(ctx, c)
				o.Emit(keycount.Count{Key: e.Key, Count: c})
				return nil
			}, weir.WithState(counts))
		path := filepath.Join(dir, name+".jsonl")
		weir.ToSink(out, name+"-sink", weir.FileSink[keycount.Count](path))
		return path
	}
	outA := pipeline("a", &opensA, true)
	outB := pipeline("b", &opensB, false)
	res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
		Mode: weir.CheckpointUnaligned, Interval: 10 * time.Millisecond, StateDir: filepath.Join(dir, "state")}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 1 || res.Restarts != 1 {
		t.Fatalf("failures %d, restarts %d; want 1 and 1", res.Failures, res.Restarts)
	}
	if opensA.Load() != 2 || opensB.Load() != 1 {
		t.Fatalf("source opened %d times in the failed region and %d in the other; want 2 and 1", opensA.Load(), opensB.Load())
	}
	for _, path := range []string{outA, outB} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = keycount.Verify(f, n, 1)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
	}
}
