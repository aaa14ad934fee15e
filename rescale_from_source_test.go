package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/rescale/flow"
)

// gatedEvent is a record of TestRescaleFromSourceSeesASlowUpstreamStage:
// From is the slow stage's instance that passed it on, Gated whether that
// stage held it up.
type gatedEvent struct {
	Key   string `msgpack:"k"`
	From  int    `msgpack:"f"`
	Gated bool   `msgpack:"g"`
}

// TestRescaleFromSourceSeesASlowUpstreamStage: source → slow (a stateless
// stage of 16 instances) → pass (a fast one, one instance a slow instance)
// → count (keyed, rescaled 2→1→2…: half the groups move) → discard, one
// record a buffer. Once the test opens slow's gate, slow holds up each
// record for gateDelay before passing it on, so the records back up in the
// source and in the channels to slow, and every record slow passes on is at
// least gateDelay old when it reaches count, two stages downstream, while
// count itself, starved, takes each record soon after its delivery. The test waits until every
// count instance has had a held-up record from every slow instance (the
// channels keep order, so none it takes later was let through before the
// gate), then rescales count 2→1→2…: every record count takes during a
// rescale, of moved and unmoved groups, is from its source at least
// gateDelay, and never below the same records' wait at count. (The wait
// at count, from the delivery, stays far below gateDelay on an idle
// machine, as the log shows: it does not see the slow stage. A busy
// machine can make count itself slow, so the test does not assert it.)
func TestRescaleFromSourceSeesASlowUpstreamStage(t *testing.T) {
	const (
		slowInstances = 16
		gateDelay     = 20 * time.Millisecond
		keys          = 200
	)
	var gate atomic.Bool
	var seen [3][slowInstances]atomic.Bool // count instance × slow instance: a held-up record came
	g := weir.NewGraph("fromsource")
	src := weir.Generate(g, "source", weir.Unbounded, func(i int64) gatedEvent {
		return gatedEvent{Key: fmt.Sprintf("k%04d", i%keys)}
	})
	slow := weir.MapWithContext(src.Rebalance(), "slow", func(ctx *weir.OpContext, e gatedEvent) gatedEvent {
		e.From = ctx.Instance()
		if gate.Load() {
			time.Sleep(gateDelay) // the slowdown itself, not a wait for something
			e.Gated = true
		}
		return e
	}, weir.Parallelism(slowInstances))
	// pass is a fast stage between slow and count, one instance a slow
	// instance: a record's latency at count must count slow's hold-up
	// through it.
	pass := weir.Map(slow.Forward(), "pass", func(e gatedEvent) gatedEvent { return e }, weir.Parallelism(slowInstances))
	counts := weir.NewValueState[int64](g, "count")
	out := weir.Process(weir.KeyBy(pass, func(e gatedEvent) string { return e.Key }), "count",
		func(ctx *weir.KeyedContext[string], e gatedEvent, out *weir.Emitter[int64]) error {
			if e.Gated && ctx.Instance() < len(seen) {
				seen[ctx.Instance()][e.From].Store(true)
			}
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(c)
			return nil
		}, weir.WithState(counts), weir.Parallelism(2))
	weir.ToSink(out, "sink", weir.DiscardSink[int64](nil))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var job *actors.Job
	ran := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, g, weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 200 * time.Millisecond,
			StateDir: filepath.Join(t.TempDir(), "state")}),
			weir.WithRuntime(weir.RuntimeOptions{BatchSize: 1, ChannelCapacity: 8}),
			weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); job = j; mu.Unlock() }))
		ran <- err
	}()
	running := func() *actors.Job { mu.Lock(); defer mu.Unlock(); return job }
	// count ran ungated for a while: records before the rescale.
	if !poll.Until(60*time.Second, 10*time.Millisecond, func() bool {
		j := running()
		if j == nil {
			return false
		}
		var n int64
		for _, f := range j.TaskFigures(time.Now()) {
			if f.Operator == "count" {
				n += f.RecordsIn
			}
		}
		return n >= 5000
	}) {
		t.Fatal("count processed no 5000 records within 60 s")
	}
	gate.Store(true)
	if !poll.Until(60*time.Second, 10*time.Millisecond, func() bool {
		for c := range 2 {
			for s := range slowInstances {
				if !seen[c][s].Load() {
					return false
				}
			}
		}
		return true
	}) {
		t.Fatal("count's instances did not all get a held-up record from every slow instance within 60 s")
	}
	// A rescale takes few records of either kind while slow is held up:
	// rescale 2→1→2→… until both kinds were measured (each time, the
	// figures of those there were are checked).
	ms := float64(gateDelay) / float64(time.Millisecond)
	sawMoved, sawUnmoved := false, false
	for k := 0; k < 8 && !(sawMoved && sawUnmoved); k++ {
		p := 1 + k%2
		rctx, rcancel := context.WithTimeout(ctx, 120*time.Second)
		res, err := running().Rescale(rctx, map[string]int{"count": p})
		rcancel()
		if err != nil {
			t.Fatalf("rescale to %d: %v", p, err)
		}
		f := res.Flow
		if f == nil {
			t.Fatalf("rescale to %d: no flow figures: %+v", p, res)
		}
		t.Logf("rescale to %d with slow held up %v a record: %s", p, gateDelay, f)
		for _, l := range []struct {
			name string
			l    flow.Latency
			saw  *bool
		}{{"moved", f.FromSourceMoved, &sawMoved}, {"unmoved", f.FromSourceUnmoved, &sawUnmoved}} {
			if l.l.Records == 0 {
				continue
			}
			*l.saw = true
			if l.l.P50Ms < ms {
				t.Errorf("rescale to %d: latency from the source of %s groups' records during it: %s; want p50 at least the %v each was held up",
					p, l.name, l.l, gateDelay)
			}
		}
		// Each record's latency from its source includes its wait at
		// count, so the quantiles of the same records cannot be below the
		// wait's.
		for _, c := range []struct {
			name      string
			src, wait flow.Latency
		}{{"moved", f.FromSourceMoved, f.Moved}, {"unmoved", f.FromSourceUnmoved, f.Unmoved}} {
			if c.src.Records != c.wait.Records || c.src.P50Ms < c.wait.P50Ms || c.src.P99Ms < c.wait.P99Ms {
				t.Errorf("rescale to %d: %s groups' records during it: from the source %s, below their wait at count %s", p, c.name, c.src, c.wait)
			}
		}
	}
	if !sawMoved || !sawUnmoved {
		t.Errorf("8 rescales measured no latency from the source of records during them: of moved groups' %v, of unmoved groups' %v", sawMoved, sawUnmoved)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the job did not stop within 60 s of its cancel")
	}
}
