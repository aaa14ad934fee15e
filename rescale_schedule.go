package weir

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/rescale/flow"
)

// RescaleStep is one live rescale of a schedule: After the job started (or
// once the step before it has committed, if that is later), the named
// operators go to the given parallelisms.
type RescaleStep struct {
	After       time.Duration
	Parallelism map[string]int
}

// WithRescaleSchedule rescales operators live while the job runs, step by
// step (see actors.Job.Rescale).
func WithRescaleSchedule(steps ...RescaleStep) RunOption {
	return func(c *RunConfig) { c.Rescale = append(c.Rescale, steps...) }
}

// RescaleStat is one scheduled rescale of a run.
type RescaleStat struct {
	Step int `json:"step"`
	// Changes says what changed: "count 2→3 moves 42 of 128 (min 42)".
	Changes string `json:"changes,omitempty"`
	// Took is from the start of the rescale to its commit.
	Took   time.Duration `json:"-"`
	TookMs float64       `json:"took_ms"`
	// Moved key groups against the fewest any balanced table could move.
	Moved   int `json:"moved"`
	Minimum int `json:"min_moves"`
	// Bytes of state handed off: key groups' state and the output that
	// removed sink instances had staged.
	Bytes int64 `json:"bytes"`
	// LongestPause is the longest any moved key group waited for its state.
	LongestPause   time.Duration `json:"-"`
	LongestPauseMs float64       `json:"longest_pause_ms"`
	// Flow is the rescaled operators' throughput and waits around the
	// rescale (nil: not measured).
	Flow *flow.Flow `json:"flow,omitempty"`
	// Err says why the step failed or did not run ("" when it committed).
	Err string `json:"error,omitempty"`
}

// rescaler runs a schedule against a job in one goroutine that Run owns: it
// ends once every step ran or the job is done, and Run waits for it.
type rescaler struct {
	done  chan struct{}
	stats []RescaleStat
}

func startRescaler(steps []RescaleStep, job *actors.Job, start time.Time, log zerolog.Logger) *rescaler {
	r := &rescaler{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for i, st := range steps {
			wait := time.NewTimer(time.Until(start.Add(st.After)))
			select {
			case <-wait.C:
			case <-job.Done():
				wait.Stop()
				for k := i; k < len(steps); k++ {
					r.stats = append(r.stats, RescaleStat{Step: k + 1, Err: "the job ended first"})
				}
				return
			}
			res, err := job.Rescale(context.Background(), st.Parallelism)
			stat := RescaleStat{Step: i + 1, Changes: res.Changes, Took: res.Took, TookMs: ms(res.Took), Moved: res.Moved,
				Minimum: res.Minimum, Bytes: res.Bytes, LongestPause: res.LongestPause, LongestPauseMs: ms(res.LongestPause), Flow: res.Flow}
			switch {
			case (errors.Is(err, actors.ErrJobEnded) || errors.Is(err, rescale.ErrInputEnded)) && job.Err() == nil:
				// The job finished, or its input ended and its final
				// checkpoint completed, while the step was being asked for.
				stat.Err = "the job ended first"
			case err != nil:
				stat.Err = err.Error()
				log.Error().Err(err).Int("step", i+1).Msg("scheduled rescale failed")
			}
			r.stats = append(r.stats, stat)
		}
	}()
	return r
}

// wait returns the steps' stats once the goroutine has ended.
func (r *rescaler) wait() []RescaleStat {
	if r == nil {
		return nil
	}
	<-r.done
	return r.stats
}
