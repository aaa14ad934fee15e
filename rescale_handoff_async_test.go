package weir_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/keygroups"
)

// encodeHold is where a heldCount's encoding stops, once armed: it holds
// the goroutine that encodes a handoff, as a slow or descheduled encoder
// would be.
type encodeHold struct {
	armed   atomic.Bool
	entered chan struct{}
	hold    chan struct{}
}

// heldCount is a count whose encoding stops at its hold point, if it has
// one and the point is armed.
type heldCount struct {
	N  int64
	at *encodeHold
}

func (v heldCount) EncodeMsgpack(e *msgpack.Encoder) error {
	if v.at != nil && v.at.armed.CompareAndSwap(true, false) {
		close(v.at.entered)
		<-v.at.hold
	}
	return e.EncodeInt(v.N)
}

func (v *heldCount) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeInt64()
	v.N = n
	return err
}

// TestLiveRescaleUnmovedGroupsFlowWhileHandoffEncodes rescales count 2 → 3
// while the encoding of a key group that moves from instance 0 is held in
// the middle: instance 0 must go on counting the keys of its groups that
// stay meanwhile, and the rescale completes once the encoding is let go.
// Before, the old owner encoded the groups it handed off on its own
// goroutine, and every group it kept paused for as long as that took.
func TestLiveRescaleUnmovedGroupsFlowWhileHandoffEncodes(t *testing.T) {
	const maxP, flowing = weir.DefaultMaxParallelism, 2000
	before, err := keygroups.Contiguous(maxP, 2)
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := before.Rescale(3)
	if err != nil {
		t.Fatal(err)
	}
	// The held key's group moves from instance 0; the others stay there.
	var heldKey string
	var stay []string
	for i := 0; len(stay) < 64 || heldKey == ""; i++ {
		k := fmt.Sprintf("k%d", i)
		g := keygroups.KeyGroup(k, maxP)
		switch {
		case before.Owner(g) != 0:
		case after.Owner(g) == 0:
			stay = append(stay, k)
		case heldKey == "":
			heldKey = k
		}
	}
	at := &encodeHold{entered: make(chan struct{}), hold: make(chan struct{})}
	var letGo atomic.Bool
	release := func() {
		if letGo.CompareAndSwap(false, true) {
			close(at.hold)
		}
	}
	t.Cleanup(release)

	var heldSeen atomic.Bool
	var stayed atomic.Int64 // records of the staying keys counted
	g := weir.NewGraph("handoff-async")
	src := weir.Generate(g, "source", 1<<40, func(i int64) string {
		if i == 0 {
			return heldKey
		}
		return stay[i%int64(len(stay))]
	})
	counts := weir.NewValueState[heldCount](g, "count")
	out := weir.Process(weir.KeyBy(src, func(k string) string { return k }), "count",
		func(ctx *weir.KeyedContext[string], k string, out *weir.Emitter[int64]) error {
			c := counts.Get(ctx)
			c.N++
			if k == heldKey {
				c.at = at
				heldSeen.Store(true)
			} else {
				stayed.Add(1)
			}
			counts.Set(ctx, c)
			out.Emit(c.N)
			return nil
		}, weir.WithState(counts), weir.Parallelism(2))
	weir.ToSink(out, "sink", weir.DiscardSink[int64](nil))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := make(chan *actors.Job, 1)
	errs := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, g, weir.WithLogger(zerolog.Nop()),
			// Checkpoints only at the end: none encodes the held count first.
			weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Hour, Timeout: time.Hour, Retain: 2,
				StateDir: filepath.Join(t.TempDir(), "state")}),
			weir.WithJobObserver(func(j *actors.Job) { jobs <- j }))
		errs <- err
	}()
	defer func() {
		release()
		cancel()
		select {
		case <-errs:
		case <-time.After(endDeadline):
			t.Errorf("the run did not end within %v of its cancel", endDeadline)
		}
	}()
	var j *actors.Job
	select {
	case j = <-jobs:
	case err := <-errs:
		t.Fatalf("run ended before the job started: %v", err)
	case <-time.After(endDeadline):
		t.Fatalf("the job did not start within %v", endDeadline)
	}
	if !poll.Until(endDeadline, poll.Every, heldSeen.Load) {
		t.Fatalf("the held key was not counted within %v", endDeadline)
	}
	at.armed.Store(true)
	rescaled := make(chan error, 1)
	go func() {
		_, err := j.Rescale(context.Background(), map[string]int{"count": 3})
		rescaled <- err
	}()
	select {
	case <-at.entered:
	case err := <-rescaled:
		t.Fatalf("the rescale ended before the handoff was encoded: %v", err)
	case <-time.After(endDeadline):
		t.Fatalf("the handoff's encoding did not reach the held count within %v", endDeadline)
	}
	from := stayed.Load()
	if !poll.Until(endDeadline, poll.Every, func() bool { return stayed.Load() >= from+flowing }) {
		t.Fatalf("instance 0 counted %d records of the groups it keeps while the handoff's encoding was held, want ≥ %d: they paused",
			stayed.Load()-from, flowing)
	}
	select {
	case err := <-rescaled:
		t.Fatalf("the rescale ended while the handoff's encoding was held: %v", err)
	default:
	}
	release()
	select {
	case err := <-rescaled:
		if err != nil {
			t.Fatalf("rescale: %v", err)
		}
	case <-time.After(endDeadline):
		t.Fatalf("the rescale did not end within %v of the encoding going on", endDeadline)
	}
}
