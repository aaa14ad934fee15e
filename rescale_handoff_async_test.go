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
// one and the point is armed, and whose decoding stops at decodeHold's,
// once armed.
type heldCount struct {
	N  int64
	at *encodeHold
}

// decodeHold is where the decoding of any heldCount stops, once armed.
var decodeHold atomic.Pointer[encodeHold]

func (v heldCount) EncodeMsgpack(e *msgpack.Encoder) error {
	if v.at != nil && v.at.armed.CompareAndSwap(true, false) {
		close(v.at.entered)
		<-v.at.hold
	}
	return e.EncodeInt(v.N)
}

func (v *heldCount) DecodeMsgpack(d *msgpack.Decoder) error {
	if at := decodeHold.Load(); at != nil && at.armed.CompareAndSwap(true, false) {
		close(at.entered)
		<-at.hold
	}
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
	heldHandoff(t, 2, 3, false, false)
}

// TestLiveRescaleUnmovedGroupsFlowWhileHandoffDecodes rescales count 3 → 2
// while the decoding of a key group that moves from instance 2 is held at
// its new owner: the new owner must go on counting the keys of its own
// groups meanwhile. Before, it decoded the handed-off state on its own
// goroutine.
func TestLiveRescaleUnmovedGroupsFlowWhileHandoffDecodes(t *testing.T) {
	heldHandoff(t, 3, 2, true, false)
}

// heldHandoff rescales count from → to while the handoff of the first key
// group that moves from the last instance that stays is held in its
// encoding (at the old owner), or in its decoding at the new owner (decode);
// the instance holding it must count the keys of its other groups
// meanwhile. With movedFlows every other record is of the held key, so its
// new owner holds them while the handoff is held, and the instance must
// count 50 buffers of its other groups meanwhile.
func heldHandoff(t *testing.T, from, to int, decode, movedFlows bool) {
	const maxP = weir.DefaultMaxParallelism
	flowing := int64(2000)
	if movedFlows {
		flowing = 50 * int64(actors.DefaultOptions().BatchSize)
	}
	before, err := keygroups.Contiguous(maxP, from)
	if err != nil {
		t.Fatal(err)
	}
	after, _, err := before.Rescale(to)
	if err != nil {
		t.Fatal(err)
	}
	// The held key's group moves; the others stay on the instance that
	// holds the handoff (the old owner, or with decode the new one).
	var heldKey string
	var stay []string
	holder := -1
	for i := 0; len(stay) < 64 || heldKey == ""; i++ {
		k := fmt.Sprintf("k%d", i)
		g := keygroups.KeyGroup(k, maxP)
		switch {
		case heldKey == "" && before.Owner(g) != after.Owner(g) && (decode || before.Owner(g) < to):
			heldKey = k
			if holder = before.Owner(g); decode {
				holder = after.Owner(g)
			}
			stay = stay[:0]
		case heldKey != "" && before.Owner(g) == holder && after.Owner(g) == holder:
			stay = append(stay, k)
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
		if i == 0 || movedFlows && i%2 == 0 {
			return heldKey
		}
		return stay[i%int64(len(stay))]
	})
	counts := weir.NewValueState[heldCount](g, "count")
	if decode {
		decodeHold.Store(at)
		t.Cleanup(func() { decodeHold.Store(nil) })
	}
	out := weir.Process(weir.KeyBy(src, func(k string) string { return k }), "count",
		func(ctx *weir.KeyedContext[string], k string, out *weir.Emitter[int64]) error {
			c := counts.Get(ctx)
			c.N++
			if k == heldKey {
				if !decode {
					c.at = at
				}
				heldSeen.Store(true)
			} else {
				stayed.Add(1)
			}
			counts.Set(ctx, c)
			out.Emit(c.N)
			return nil
		}, weir.WithState(counts), weir.Parallelism(from))
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
		_, err := j.Rescale(context.Background(), map[string]int{"count": to})
		rescaled <- err
	}()
	select {
	case <-at.entered:
	case err := <-rescaled:
		t.Fatalf("the rescale ended before the handoff was encoded: %v", err)
	case <-time.After(endDeadline):
		t.Fatalf("the handoff did not reach the held count within %v", endDeadline)
	}
	counted := stayed.Load()
	if !poll.Until(endDeadline, poll.Every, func() bool { return stayed.Load() >= counted+flowing }) {
		t.Fatalf("instance %d counted %d records of its other groups while the handoff was held, want ≥ %d: they paused",
			holder, stayed.Load()-counted, flowing)
	}
	select {
	case err := <-rescaled:
		t.Fatalf("the rescale ended while the handoff was held: %v", err)
	default:
	}
	release()
	select {
	case err := <-rescaled:
		if err != nil {
			t.Fatalf("rescale: %v", err)
		}
	case <-time.After(endDeadline):
		t.Fatalf("the rescale did not end within %v of the handoff going on", endDeadline)
	}
}
