package weir_test

import (
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// commitLog is keycount's CommitLog with test helpers.
type commitLog struct{ *keycount.CommitLog }

func newCommitLog() *commitLog { return &commitLog{keycount.NewCommitLog()} }

// verify checks that the committed output is every key's counts 1..n/k,
// each once, and that within each writer a key's counts increase.
func (l *commitLog) verify(t *testing.T, n int64, k int) {
	t.Helper()
	if err := l.VerifyWriterOrder(); err != nil {
		t.Fatal(err)
	}
	l.verifyUnordered(t, n, k)
}

// verifyUnordered is verify without the order check (see
// keycount.CommitLog.VerifyWriterOrder for when it does not hold).
func (l *commitLog) verifyUnordered(t *testing.T, n int64, k int) {
	t.Helper()
	if err := l.Verify(n, k); err != nil {
		t.Fatal(err)
	}
}

// stagedKeycount is keycount (source → keyed count with a slow stage) into
// a stagingSink at sinkP instances writing to log; prefix names its
// operators, so one graph can hold several independent pipelines.
func stagedKeycount(g *weir.Graph, prefix string, n int64, k, p, sinkP int, sleepMs float64, log *commitLog) {
	stagedKeycountInto(g, prefix, n, k, p, sinkP, sleepMs, log.Sink())
}

// stagedKeycountInto is stagedKeycount into the sinks newSink makes.
func stagedKeycountInto(g *weir.Graph, prefix string, n int64, k, p, sinkP int, sleepMs float64, newSink func(int) weir.Sink[keycount.Count]) {
	sleepers := weir.NewSleepers(time.Duration(sleepMs * float64(time.Millisecond)))
	stagedKeycountTicked(g, prefix, n, k, p, sinkP, func(i int) { sleepers[i].Tick() }, newSink)
}

// stagedKeycountTicked is stagedKeycountInto with tick(instance) called
// for each record the count stage processes.
func stagedKeycountTicked(g *weir.Graph, prefix string, n int64, k, p, sinkP int, tick func(int), newSink func(int) weir.Sink[keycount.Count]) {
	keys := keycount.Keys(k)
	events := weir.Generate(g, prefix+"source", n, func(i int64) keycount.Event {
		return keycount.Event{Key: keys[i%int64(k)], Seq: i}
	}, weir.Parallelism(p))
	counts := weir.NewValueState[int64](g, prefix+"count")
	out := weir.Process(weir.KeyBy(events, func(e keycount.Event) string { return e.Key }), prefix+"count",
		func(ctx *weir.KeyedContext[string], e keycount.Event, out *weir.Emitter[keycount.Count]) error {
			tick(ctx.Instance())
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(keycount.Count{Key: e.Key, Count: c})
			return nil
		}, weir.WithState(counts), weir.Parallelism(p))
	weir.ToSink(out, prefix+"sink", newSink, weir.Parallelism(sinkP))
}
