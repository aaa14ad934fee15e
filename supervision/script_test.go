package supervision

import (
	"errors"
	"fmt"
	"github.com/weirstream/weir/internal/scripttest"
	"github.com/weirstream/weir/internal/task"
	"strconv"
	"strings"
	"testing"
	"time"
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
//	started task=op/i gen=N             OnTaskStarted (all: every task of the job)
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

type scriptArgs struct {
	t     *testing.T
	where string
	kv    map[string]string
}

func (a scriptArgs) int(k string) int {
	if a.kv[k] == "" {
		return 0
	}
	v, err := strconv.Atoi(a.kv[k])
	if err != nil {
		a.t.Fatalf("%s: %s=%q: %v", a.where, k, a.kv[k], err)
	}
	return v
}

func (a scriptArgs) float(k string) float64 {
	if a.kv[k] == "" {
		return 0
	}
	v, err := strconv.ParseFloat(a.kv[k], 64)
	if err != nil {
		a.t.Fatalf("%s: %s=%q: %v", a.where, k, a.kv[k], err)
	}
	return v
}

func (a scriptArgs) dur(k string) time.Duration {
	if a.kv[k] == "" {
		return 0
	}
	v, err := time.ParseDuration(a.kv[k])
	if err != nil {
		a.t.Fatalf("%s: %s=%q: %v", a.where, k, a.kv[k], err)
	}
	return v
}

func (a scriptArgs) tk(word string) task.ID {
	op, inst, ok := strings.Cut(word, "/")
	n, err := strconv.Atoi(inst)
	if !ok || err != nil {
		a.t.Fatalf("%s: task %q, want op/instance", a.where, word)
	}
	return task.ID{Operator: op, Instance: n}
}

func (a scriptArgs) intensity(prefix string) Intensity {
	return Intensity{
		MaxRestarts: a.int(prefix + "max"),
		Window:      a.dur(prefix + "window"),
		Backoff: Backoff{
			Initial:    a.dur(prefix + "initial"),
			Max:        a.dur(prefix + "cap"),
			Multiplier: a.float(prefix + "mult"),
		},
	}
}

// regions parses op/i,op/i;op/i into regions with ids 0, 1, ...; operator
// ids follow the order in which operator names first appear.
func (a scriptArgs) regions(spec string) []Region {
	opIDs := map[string]int{}
	var regions []Region
	for i, part := range strings.Split(spec, ";") {
		r := Region{ID: i}
		for _, w := range strings.Split(part, ",") {
			if w == "" {
				continue
			}
			tk := a.tk(w)
			if _, ok := opIDs[tk.Operator]; !ok {
				opIDs[tk.Operator] = len(opIDs)
			}
			tk.OperatorID = opIDs[tk.Operator]
			r.Tasks = append(r.Tasks, tk)
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

func (sc *scriptState) run(t *testing.T, where, cmd string) []string {
	words := strings.Fields(cmd)
	a := scriptArgs{t: t, where: where, kv: map[string]string{}}
	for _, w := range words[1:] {
		k, v, _ := strings.Cut(w, "=")
		a.kv[k] = v
	}
	switch words[0] {
	case "tracker":
		tr, err := NewTracker(a.intensity(""))
		if err != nil {
			return configError(err)
		}
		sc.tr = tr
		return []string{"ok"}
	case "failure", "stable", "progress-tracker":
		if sc.tr == nil {
			t.Fatalf("%s: %s before tracker", where, words[0])
		}
		switch words[0] {
		case "stable":
			sc.tr.OnStable(a.dur("now"))
			return []string{"ok"}
		case "progress-tracker":
			sc.tr.OnProgress()
			return []string{"ok"}
		}
		return []string{sc.tr.OnFailure(a.dur("now")).String()}
	case "new":
		cfg := Config{Regions: a.regions(a.kv["regions"]), Intensity: a.intensity("")}
		for k := range a.kv {
			if strings.HasPrefix(k, "job-") {
				ji := a.intensity("job-")
				cfg.JobIntensity = &ji
				break
			}
		}
		s, err := New(cfg)
		if err != nil {
			return configError(err)
		}
		sc.s = s
		return []string{"ok"}
	}
	if sc.s == nil {
		t.Fatalf("%s: %s before new", where, words[0])
	}
	s := sc.s
	switch words[0] {
	case "fail":
		return actionLines(s.OnTaskFailed(a.tk(a.kv["task"]), a.kv["cause"], a.dur("now")))
	case "restarted":
		return actionLines(s.OnRegionRestarted(a.int("region"), a.dur("now")))
	case "restore-failed":
		return actionLines(s.OnRestoreFailed(a.int("region"), a.kv["cause"], a.dur("now")))
	case "tick":
		return actionLines(s.Tick(a.dur("now")))
	case "progress":
		s.OnProgress()
		return []string{"ok"}
	case "started":
		if a.kv["task"] == "all" {
			for _, r := range s.cfg.Regions {
				for _, tk := range r.Tasks {
					s.OnTaskStarted(tk, a.int("gen"))
				}
			}
		} else {
			s.OnTaskStarted(a.tk(a.kv["task"]), a.int("gen"))
		}
		return []string{"ok"}
	case "ended":
		acts, end := s.OnTaskEnded(a.tk(a.kv["task"]), a.int("gen"))
		return append(actionLines(acts), end.String())
	case "node-lost":
		return actionLines(s.OnNodeLost(a.tk(a.kv["task"])))
	case "writing":
		s.OnManifestWriteStarted()
		return []string{"ok"}
	case "written":
		return actionLines(s.OnManifestWriteEnded())
	case "completed":
		s.OnCheckpointCompleted(uint64(a.int("id")))
		return []string{"ok"}
	case "ready":
		acts, restoring := s.OnTaskReady(a.tk(a.kv["task"]), a.dur("now"))
		return append(actionLines(acts), map[bool]string{true: "restoring", false: "not restoring"}[restoring])
	case "first-record":
		return actionLines(s.OnFirstRecord(a.tk(a.kv["task"]), a.dur("now")))
	case "run":
		return []string{s.RunState(a.int("region"))}
	case "rebuild":
		if err := s.Rebuild(a.regions(a.kv["regions"])); err != nil {
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
	t.Fatalf("%s: unknown command %q", where, words[0])
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
