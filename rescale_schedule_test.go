package weir_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/samples/keycount"
)

// TestRescaleScheduleStepAfterTheEnd: a scheduled step asked for while the
// job finishes is reported as not run ("the job ended first"), never as a
// failed rescale. Tiny jobs with a step due at once make the two race; the
// old code reported "rescale: the job ended" when the job won.
func TestRescaleScheduleStepAfterTheEnd(t *testing.T) {
	for run := range 40 {
		g, err := keycount.Build(keycount.Config{Records: 50, Keys: 10, Parallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		res, err := weir.Run(context.Background(), g, weir.WithRescaleSchedule(
			weir.RescaleStep{Parallelism: map[string]int{"count": 3}}))
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range res.Rescales {
			if strings.HasPrefix(st.Err, actors.ErrJobEnded.Error()) {
				t.Fatalf("run %d, step %d: %q, want the step reported as not run", run, st.Step, st.Err)
			}
		}
	}
}
