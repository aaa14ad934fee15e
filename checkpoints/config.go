package checkpoints

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// ErrInvalidConfig is returned by New for a configuration it cannot run.
var ErrInvalidConfig = errors.New("checkpoints: invalid config")

// Config is the checkpoint policy of one job.
type Config struct {
	// Interval is the time between the end (completion or abort) of one
	// checkpoint and the next trigger; also the delay of the first trigger.
	Interval time.Duration
	// Timeout aborts a checkpoint whose acknowledgements are not all in this
	// long after its trigger.
	Timeout time.Duration
	// Retain is how many of the newest completed checkpoints to keep (>= 1).
	Retain int
	// Tasks is every task that must acknowledge a checkpoint.
	Tasks []task.ID
	// Sources are the tasks of Tasks that read the job's input: once every
	// one is idle (OnSourceIdle) the final checkpoint is requested.
	Sources []task.ID
	// Sinks are the tasks of Tasks that commit output: the job ends once
	// every one committed the final or stop checkpoint (OnSinkCommitted).
	Sinks []task.ID
	// After, when larger than the checkpoint New continues from, is the
	// newest id already used in the store (by checkpoints newer than the
	// restored one, or never completed): new ids start after it, so a restore
	// never reuses the id of a checkpoint an earlier run wrote.
	After uint64
	// MaxConcurrent is how many checkpoints may be in flight at once (0
	// means 1). With more than one, the next checkpoint is triggered
	// Interval after the later of the previous trigger and the last end,
	// even if older ones are not written yet; they still complete in the
	// order of their ids.
	MaxConcurrent int
}

func (c Config) validate() error {
	if c.Interval < 0 {
		return fmt.Errorf("interval %v is negative: %w", c.Interval, ErrInvalidConfig)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("timeout %v, need > 0: %w", c.Timeout, ErrInvalidConfig)
	}
	if c.MaxConcurrent < 0 {
		return fmt.Errorf("max concurrent checkpoints %d is negative: %w", c.MaxConcurrent, ErrInvalidConfig)
	}
	if c.Retain < 1 {
		return fmt.Errorf("retain %d, need at least 1: %w", c.Retain, ErrInvalidConfig)
	}
	if len(c.Tasks) == 0 {
		return fmt.Errorf("no tasks: %w", ErrInvalidConfig)
	}
	seen := make(map[task.ID]bool, len(c.Tasks))
	for _, t := range c.Tasks {
		if seen[t] {
			return fmt.Errorf("task %v listed twice: %w", t, ErrInvalidConfig)
		}
		seen[t] = true
	}
	for _, set := range []struct {
		name  string
		tasks []task.ID
	}{{"source", c.Sources}, {"sink", c.Sinks}} {
		in := make(map[task.ID]bool, len(set.tasks))
		for _, t := range set.tasks {
			if !seen[t] || in[t] {
				return fmt.Errorf("%s %v not a task or listed twice: %w", set.name, t, ErrInvalidConfig)
			}
			in[t] = true
		}
	}
	return nil
}
