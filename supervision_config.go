package weir

import (
	"time"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/supervision"
)

// SupervisionConfig says how a job recovers from failures. With checkpoints,
// a failed task's region (the tasks connected to it by channels) is restored
// from the latest completed checkpoint while the rest of the job keeps running;
// more than MaxRestarts within RestartWindow fail the job, which keeps its last
// checkpoint for a later --restore. Without checkpoints a failure fails the job.
type SupervisionConfig struct {
	MaxRestarts   int
	RestartWindow time.Duration
	// BackoffInitial and BackoffMax bound the delay before consecutive restarts
	// (it doubles with each one and resets after a stable window).
	BackoffInitial, BackoffMax time.Duration
	// ChaosKillEvery > 0 kills a random task or channel actor (Stop, Poison or
	// an injected panic) about this often; ChaosSeed makes the run repeatable.
	ChaosKillEvery time.Duration
	ChaosSeed      int64
}

// DefaultSupervision allows 10 restarts a minute, 5 ms apart at first and at
// most 50 ms apart.
func DefaultSupervision() SupervisionConfig {
	d := actors.DefaultSupervisionOptions()
	return SupervisionConfig{MaxRestarts: d.MaxRestarts, RestartWindow: d.Window,
		BackoffInitial: d.Backoff.Initial, BackoffMax: d.Backoff.Max}
}

func (s SupervisionConfig) runtime() actors.SupervisionOptions {
	return actors.SupervisionOptions{MaxRestarts: s.MaxRestarts, Window: s.RestartWindow,
		Backoff:        supervision.Backoff{Initial: s.BackoffInitial, Max: max(s.BackoffMax, s.BackoffInitial), Multiplier: 2},
		ChaosKillEvery: s.ChaosKillEvery, ChaosSeed: s.ChaosSeed}
}
