package supervision

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/scripttest"
)

// A script in testdata/*.txt is a list of blocks separated by blank lines:
//
//	# comments
//	command key=value ...
//	----
//	expected output, one line per action
//
// Intensity keys (for tracker and new): max=N window=D initial=D cap=D mult=F;
// new also takes job-max, job-window, job-initial, job-cap, job-mult (any of
// them gives the job its own intensity, unset ones default to zero).
//
// Commands:
//
//	tracker <intensity>                 a Tracker alone
//	failure now=D                       Tracker.OnFailure
//	stable now=D                        Tracker.OnStable
//	new regions=op/i,op/i;op/i <intensity>
//	fail task=op/i cause=WORD now=D
//	restarted region=N now=D
//	restore-failed region=N cause=WORD now=D
//	tick now=D
//	states                              every region's state, the next restart
//
// The run-state of a restart (the actor's events):
//
//	started task=op/i|all gen=N         OnTaskStarted (all: every task of the job)
//	ended task=op/i gen=N               OnTaskEnded, then what the end means
//	node-lost task=op/i                 OnNodeLost
//	writing                             OnManifestWriteStarted
//	written                             OnManifestWriteEnded
//	completed id=N                      OnCheckpointCompleted
//	ready task=op/i now=D               OnTaskReady, then restoring or not
//	first-record task=op/i now=D        OnFirstRecord
//	run region=N                        the region's run-state
//	rebuild regions=op/i,op/i;op/i      Rebuild (a new plan)
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func() scripttest.Runner {
		var sc scriptState
		return sc.run
	})
}

type scriptState struct {
	tr *Tracker
	s  *Supervisor
}

// intensity reads max, window, initial, cap and mult, each with prefix.
func intensity(c *scripttest.Command, prefix string) Intensity {
	return Intensity{
		MaxRestarts: c.IntOr(prefix+"max", 0),
		Window:      c.DurationOr(prefix+"window", 0),
		Backoff: Backoff{
			Initial:    c.DurationOr(prefix+"initial", 0),
			Max:        c.DurationOr(prefix+"cap", 0),
			Multiplier: c.Float64Or(prefix+"mult", 0),
		},
	}
}

// jobIntensity reads the job-prefixed intensity keys, nil when none is given.
func jobIntensity(c *scripttest.Command) *Intensity {
	ji := intensity(c, "job-")
	for _, k := range []string{"max", "window", "initial", "cap", "mult"} {
		if c.Has("job-" + k) {
			return &ji
		}
	}
	return nil
}

// regions parses op/i,op/i;op/i into regions with ids 0, 1, ...; operator
// ids follow the order in which operator names first appear.
func regions(c *scripttest.Command, spec string) []Region {
	opIDs := map[string]int{}
	var regions []Region
	for i, part := range strings.Split(spec, ";") {
		r := Region{ID: i}
		for _, w := range strings.Split(part, ",") {
			if w == "" {
				continue
			}
			id, err := scripttest.ParseTask(w)
			if err != nil {
				c.Fatalf("regions=%q: %v", spec, err)
			}
			if _, ok := opIDs[id.Operator]; !ok {
				opIDs[id.Operator] = len(opIDs)
			}
			id.OperatorID = opIDs[id.Operator]
			r.Tasks = append(r.Tasks, id)
		}
		regions = append(regions, r)
	}
	return regions
}

func configError(err error) []string {
	if errors.Is(err, ErrInvalidConfig) {
		return []string{"config error: " + err.Error()}
	}
	return []string{"error: " + err.Error()}
}

func (sc *scriptState) run(t *testing.T, c *scripttest.Command) []string {
	switch c.Name {
	case "tracker":
		tr, err := NewTracker(intensity(c, ""))
		if err != nil {
			return configError(err)
		}
		sc.tr = tr
		return []string{"ok"}
	case "failure", "stable", "progress-tracker":
		if sc.tr == nil {
			c.Fatalf("before tracker")
		}
		switch c.Name {
		case "stable":
			sc.tr.OnStable(c.DurationOr("now", 0))
			return []string{"ok"}
		case "progress-tracker":
			sc.tr.OnProgress()
			return []string{"ok"}
		}
		return []string{sc.tr.OnFailure(c.DurationOr("now", 0)).String()}
	case "new":
		cfg := Config{Regions: regions(c, c.StringOr("regions", "")), Intensity: intensity(c, ""), JobIntensity: jobIntensity(c)}
		s, err := New(cfg)
		if err != nil {
			return configError(err)
		}
		sc.s = s
		return []string{"ok"}
	}
	if sc.s == nil {
		c.Fatalf("before new")
	}
	s := sc.s
	switch c.Name {
	case "fail":
		return actionLines(s.OnTaskFailed(c.Task("task"), c.String("cause"), c.DurationOr("now", 0)))
	case "restarted":
		return actionLines(s.OnRegionRestarted(c.IntOr("region", 0), c.DurationOr("now", 0)))
	case "restore-failed":
		return actionLines(s.OnRestoreFailed(c.IntOr("region", 0), c.String("cause"), c.DurationOr("now", 0)))
	case "tick":
		return actionLines(s.Tick(c.DurationOr("now", 0)))
	case "progress":
		s.OnProgress()
		return []string{"ok"}
	case "started":
		if c.String("task") == "all" {
			for _, r := range s.cfg.Regions {
				for _, tk := range r.Tasks {
					s.OnTaskStarted(tk, c.Int("gen"))
				}
			}
		} else {
			s.OnTaskStarted(c.Task("task"), c.Int("gen"))
		}
		return []string{"ok"}
	case "ended":
		acts, end := s.OnTaskEnded(c.Task("task"), c.Int("gen"))
		return append(actionLines(acts), end.String())
	case "node-lost":
		return actionLines(s.OnNodeLost(c.Task("task")))
	case "writing":
		s.OnManifestWriteStarted()
		return []string{"ok"}
	case "written":
		return actionLines(s.OnManifestWriteEnded())
	case "completed":
		s.OnCheckpointCompleted(c.Uint64("id"))
		return []string{"ok"}
	case "ready":
		acts, restoring := s.OnTaskReady(c.Task("task"), c.DurationOr("now", 0))
		return append(actionLines(acts), map[bool]string{true: "restoring", false: "not restoring"}[restoring])
	case "first-record":
		return actionLines(s.OnFirstRecord(c.Task("task"), c.DurationOr("now", 0)))
	case "run":
		return []string{s.RunState(c.Int("region"))}
	case "rebuild":
		if err := s.Rebuild(regions(c, c.StringOr("regions", ""))); err != nil {
			return []string{"error: " + err.Error()}
		}
		return []string{"ok"}
	case "states":
		var parts []string
		for _, r := range s.cfg.Regions {
			st, _ := s.State(r.ID)
			parts = append(parts, fmt.Sprintf("%d:%v", r.ID, st))
		}
		next := "next=none"
		if at, ok := s.NextRestart(); ok {
			next = fmt.Sprintf("next=%v", at)
		}
		return []string{strings.Join(parts, " ") + " " + next + fmt.Sprintf(" failed=%v", s.Failed())}
	}
	c.Fatalf("unknown command")
	return nil
}

func actionLines(acts []Action) []string {
	if len(acts) == 0 {
		return []string{"(none)"}
	}
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.String()
	}
	return out
}
