package supervision

import (
	"fmt"

	"github.com/weirstream/weir/internal/task"
)

// Config is the supervision policy of one job.
type Config struct {
	// Regions are the job's restart units, as Regions computes them.
	Regions []Region
	// Intensity limits the restarts of each region; a region exceeding it
	// escalates to the job.
	Intensity Intensity
	// JobIntensity limits the restarts of all regions together (every region
	// failure counts, escalated or not); exceeding it fails the job. Its
	// backoff delays the job-wide restart that follows a region's escalation,
	// its exponent counting every restart since all regions last ran stably.
	// Nil means Intensity.
	JobIntensity *Intensity
	// Latest is the checkpoint a region restarts from until a checkpoint
	// completes (OnCheckpointCompleted); 0 means start over.
	Latest uint64
}

// jobIntensity returns the job-wide limit.
func (c Config) jobIntensity() Intensity {
	if c.JobIntensity != nil {
		return *c.JobIntensity
	}
	return c.Intensity
}

func (c Config) validate() error {
	if err := c.Intensity.Validate(); err != nil {
		return fmt.Errorf("region intensity: %w", err)
	}
	if c.JobIntensity != nil {
		if err := c.JobIntensity.Validate(); err != nil {
			return fmt.Errorf("job intensity: %w", err)
		}
	}
	if len(c.Regions) == 0 {
		return fmt.Errorf("no regions: %w", ErrInvalidConfig)
	}
	ids := map[int]bool{}
	tasks := map[taskKey]int{}
	for _, r := range c.Regions {
		if r.ID < 0 || ids[r.ID] {
			return fmt.Errorf("region id %d negative or listed twice: %w", r.ID, ErrInvalidConfig)
		}
		ids[r.ID] = true
		if len(r.Tasks) == 0 {
			return fmt.Errorf("region %d has no tasks: %w", r.ID, ErrInvalidConfig)
		}
		for _, t := range r.Tasks {
			if other, dup := tasks[keyOf(t)]; dup {
				return fmt.Errorf("task %v in regions %d and %d: %w", t, other, r.ID, ErrInvalidConfig)
			}
			tasks[keyOf(t)] = r.ID
		}
	}
	return nil
}

// taskKey identifies a task by operator name and instance; the operator id is
// informational.
type taskKey struct {
	op   string
	inst int
}

func keyOf(t task.ID) taskKey { return taskKey{t.Operator, t.Instance} }
