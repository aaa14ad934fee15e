package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/actors"
)

// The phases of a checkpointing run of `node bench state`, after its
// measured window: held and on, in turn (alternateHeld). The task files a
// record's latency under the phase it is processed in.
const (
	phaseWindow int32 = iota // the measured window, before the alternation
	phaseHeld                // the job's checkpoints held: none in flight
	phaseOn                  // checkpoints every interval, as in the window
)

// heldPair is one held phase and the on phase after it: the records the
// task processed in each and how long each lasted.
type heldPair struct {
	heldRecords, onRecords int64
	held, on               time.Duration
}

// ratio is the pair's throughput with checkpoints against held, in %.
func (p heldPair) ratio() float64 {
	if p.heldRecords == 0 || p.held <= 0 || p.on <= 0 {
		return 0
	}
	on := float64(p.onRecords) / p.on.Seconds()
	held := float64(p.heldRecords) / p.held.Seconds()
	return 100 * on / held
}

// alternateHeld compares a running job with its checkpoints going on
// against the same job with them held, in the same process, heap and
// hour: runs taken one after another by `node bench state` differ by more
// than checkpoints cost (another fill lays the state out elsewhere in
// memory, and the machine's other work comes and goes). It runs
// cfg.holdPairs pairs of phases of cfg.holdPhase: held (from when no
// checkpoint is in flight), then on (until the last checkpoint triggered
// in it ended, so that its whole cost counts there). It also returns where
// the phases' time went (onSplit).
func alternateHeld(ctx context.Context, cfg stateBenchConfig, job *actors.Job, sh *stateShared) ([]heldPair, onSplit, error) {
	pairs := make([]heldPair, 0, cfg.holdPairs)
	if err := holdIdle(ctx, job); err != nil {
		return nil, onSplit{}, err
	}
	split := startSplit(sh, job.Metrics)
	defer split.stop()
	for range cfg.holdPairs {
		sh.phase.Store(phaseHeld)
		n0, t0 := sh.processed.Load(), time.Now()
		if err := waitFor(ctx, job, cfg.holdPhase); err != nil {
			return nil, onSplit{}, err
		}
		if err := job.HoldCheckpoints(ctx, false); err != nil {
			return nil, onSplit{}, err
		}
		sh.phase.Store(phaseOn)
		n1, t1 := sh.processed.Load(), time.Now()
		if err := waitFor(ctx, job, cfg.holdPhase); err != nil {
			return nil, onSplit{}, err
		}
		if err := holdIdle(ctx, job); err != nil { // the on phase ends, the next held one starts
			return nil, onSplit{}, err
		}
		n2, t2 := sh.processed.Load(), time.Now()
		pairs = append(pairs, heldPair{heldRecords: n1 - n0, held: t1.Sub(t0), onRecords: n2 - n1, on: t2.Sub(t1)})
	}
	return pairs, split.stop(), job.HoldCheckpoints(ctx, false) // sampled up to the last on phase's end
}

// holdIdle holds the job's checkpoints and waits until none is in flight.
func holdIdle(ctx context.Context, job *actors.Job) error {
	if err := job.HoldCheckpoints(ctx, true); err != nil {
		return err
	}
	return waitIdle(ctx, job)
}

// waitIdle waits until none of the job's checkpoints is in flight.
func waitIdle(ctx context.Context, job *actors.Job) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for job.CheckpointsInFlight() > 0 {
		select {
		case <-tick.C:
		case <-job.Done():
			return fmt.Errorf("run ended while its checkpoints were held: %v", job.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// waitFor waits d, unless the job ends first.
func waitFor(ctx context.Context, job *actors.Job, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-job.Done():
		return fmt.Errorf("run ended while alternating: %v", job.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// vsHeld is the median of the pairs' ratios, in %; 0 without pairs.
func vsHeld(pairs []heldPair) float64 {
	if len(pairs) == 0 {
		return 0
	}
	v := make([]float64, len(pairs))
	for i, p := range pairs {
		v[i] = p.ratio()
	}
	return median(v)
}

// heldProgress is the progress line's account of a cell's held and on
// phases: each pair's ratio, and the paced run's p99 in each.
func heldProgress(pairs []heldPair, paced stateRun) string {
	if len(pairs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; on vs held:")
	for _, p := range pairs {
		fmt.Fprintf(&b, " %.1f %%", p.ratio())
	}
	fmt.Fprintf(&b, ", paced p99 %.2f ms on, %.2f ms held", ms(paced.p99On), ms(paced.p99Held))
	return b.String()
}
