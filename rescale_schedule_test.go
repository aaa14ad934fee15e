package weir_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/samples/keycount"
)

// TestRescaleScheduleStepAfterTheEnd: a scheduled step asked for while the
// job finishes is reported as not run ("the job ended first"), never as a
// failed rescale. Tiny jobs with a step due at once make the two race; the
// old code reported "rescale: the job ended" when the job won.
func TestRescaleScheduleStepAfterTheEnd(t *testing.T) {
	for _, ckpt := range []bool{false, true} {
		for run := range 40 {
			g, err := keycount.Build(keycount.Config{Records: 50, Keys: 10, Parallelism: 2})
			if err != nil {
				t.Fatal(err)
			}
			opts := []weir.RunOption{weir.WithRescaleSchedule(weir.RescaleStep{Parallelism: map[string]int{"count": 3}})}
			if ckpt {
				// With checkpoints the step may also meet the final checkpoint
				// completed: the input ended, the job is finishing.
				opts = append(opts, weir.WithCheckpoints(weir.CheckpointConfig{Mode: weir.CheckpointAligned,
					Interval: time.Millisecond, Timeout: 30 * time.Second, StateDir: filepath.Join(t.TempDir(), "state")}))
			}
			res, err := weir.Run(context.Background(), g, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range res.Rescales {
				if strings.HasPrefix(st.Err, actors.ErrJobEnded.Error()) || strings.Contains(st.Err, rescale.ErrInputEnded.Error()) {
					t.Fatalf("checkpoints %v, run %d, step %d: %q, want the step reported as not run", ckpt, run, st.Step, st.Err)
				}
			}
		}
	}
}
