package weir_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// sinkFaults are failures injected once each into a staging sink's
// handoff: at a removed instance's HandOff, at TakeOver, or at the first
// PrepareCommit of an instance after it took a removed one's output over
// (a failure after the rescale committed, before the next checkpoint).
type sinkFaults struct {
	handOff, takeOver, prepareAfterTakeOver atomic.Bool
	tookOver                                atomic.Bool
}

var errInjected = errors.New("injected sink fault")

// faultySink is a staging sink with sinkFaults.
type faultySink struct {
	weir.HandOffSink[keycount.Count]
	f *sinkFaults
}

func (s *faultySink) HandOff() ([]byte, error) {
	if s.f.handOff.CompareAndSwap(true, false) {
		return nil, errInjected
	}
	return s.HandOffSink.HandOff()
}

func (s *faultySink) TakeOver(state []byte) error {
	if s.f.takeOver.CompareAndSwap(true, false) {
		return errInjected
	}
	s.f.tookOver.Store(true)
	return s.HandOffSink.TakeOver(state)
}

func (s *faultySink) PrepareCommit(id uint64) ([]byte, error) {
	if s.f.tookOver.Load() && s.f.prepareAfterTakeOver.CompareAndSwap(true, false) {
		return nil, errInjected
	}
	return s.HandOffSink.PrepareCommit(id)
}

// TestLiveRescaleStagingSinkShrinkFailures shrinks the two-phase sink
// 3 → 1 with one failure injected at each step of the handoff: a removed
// instance failing as it hands off and the remaining one failing as it
// takes over abort the rescale (the job recovers its latest checkpoint at
// 3 instances, each its own transactions); a failure at the first
// checkpoint after the commit restores the checkpoint before the rescale
// at 1 instance, which recovers the removed ones' transactions. A second
// shrink follows. Every key's counts are committed once each.
func TestLiveRescaleStagingSinkShrinkFailures(t *testing.T) {
	for _, fault := range []string{"hand-off", "take-over", "after-commit"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			const n, k = 60_000, 40
			log := newCommitLog()
			f := &sinkFaults{}
			switch fault {
			case "hand-off":
				f.handOff.Store(true)
			case "take-over":
				f.takeOver.Store(true)
			default:
				f.prepareAfterTakeOver.Store(true)
			}
			sinks := log.Sink()
			g := weir.NewGraph("keycount")
			stagedKeycountInto(g, "", n, k, 2, 3, 0.05, func(i int) weir.Sink[keycount.Count] {
				return &faultySink{HandOffSink: sinks(i).(weir.HandOffSink[keycount.Count]), f: f}
			})
			ctx, cancel := chaosDeadline(t)
			defer cancel()
			sup := weir.DefaultSupervision()
			sup.MaxRestarts, sup.RestartWindow = 100, time.Minute
			res, err := weir.Run(ctx, g, checkpointsEvery30ms(weir.CheckpointUnaligned, t.TempDir()), weir.WithSupervision(sup),
				weir.WithRescaleSchedule(
					weir.RescaleStep{After: 25 * time.Millisecond, Parallelism: map[string]int{"sink": 1}},
					weir.RescaleStep{After: 400 * time.Millisecond, Parallelism: map[string]int{"sink": 2}},
					weir.RescaleStep{After: 600 * time.Millisecond, Parallelism: map[string]int{"sink": 1}},
				))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d failures, %d restarts", res.Failures, res.Restarts)
			for _, r := range res.Rescales {
				t.Logf("rescale %d: %s took %v %s", r.Step, r.Changes, r.Took, r.Err)
			}
			first := res.Rescales[0].Err
			switch fault {
			case "hand-off", "take-over":
				if !strings.Contains(first, "aborted") || !strings.Contains(first, errInjected.Error()) {
					t.Fatalf("first shrink: %q, want it aborted by the injected fault", first)
				}
			default:
				if first != "" {
					t.Fatalf("first shrink: %q, want it committed", first)
				}
			}
			if res.Restarts == 0 {
				t.Fatal("the injected fault restarted nothing")
			}
			log.verifyUnordered(t, n, k)
		})
	}
}
