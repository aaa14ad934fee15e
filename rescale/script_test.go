package rescale

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/scripttest"
	"github.com/weirstream/weir/keygroups"
)

// A script in testdata/*.txt drives a rescale's coordinator and the machines
// of its tasks with logical time (at=D):
//
//	plan max=N p=N to=op:p,... [timeout=D] [staging=op] [handoff=op]
//	                                         keycount (source → hash → count → sink) at p, rescaled; a fresh coordinator
//	                                         (staging: op stages its output per checkpoint; handoff: and hands it off)
//	checkpoint-start id=N                    -> ok | error
//	checkpoint-end id=N at=D                 -> actions
//	final-checkpoint-completed id=N at=D     -> actions (the job's final checkpoint)
//	start at=D                               -> actions | error
//	prepared task=op/i at=D                  -> actions | error
//	done task=op/i at=D [bytes=N] [pause=D]  -> actions | error (a TaskDone reaching the coordinator)
//	drained task=op/i producer=op/i at=D     -> actions (an InputDrained reaching the coordinator)
//	fail at=D reason=WORD                    -> actions
//	tick at=D                                -> actions
//	may-checkpoint                           -> true | false
//	task task=op/i inputs=N [hold=N] [seen=s,...] [retired=i,...]  -> the task's part in the plan
//	begin task=op/i at=D                     -> actions
//	inject task=op/i at=D                    -> actions | error
//	barrier task=op/i in=I last=S at=D       -> actions | error
//	buffer task=op/i in=I seq=S groups=g,... at=D   -> decision, then actions | error
//	handoff task=op/i from=I groups=g,... bytes=N at=D  -> actions | error
//	fence task=op/i from=I at=D              -> actions
//	staged task=op/i from=I at=D [bytes=N]   -> actions | error (removed instance I's staged output, N bytes, arriving)
//
// A task's TaskDone is printed, not passed on: the script passes it with done.
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func() scripttest.Runner {
		s := &script{tasks: map[string]*Task{}}
		return s.run
	})
}

type script struct {
	plan  *Plan
	coord *Coordinator
	tasks map[string]*Task
}

func (s *script) run(t *testing.T, c *scripttest.Command) []string {
	at := c.DurationOr("at", 0)
	if c.Name == "plan" {
		return s.newPlan(t, c)
	}
	if s.plan == nil {
		c.Fatalf("no plan yet")
	}
	switch c.Name {
	case "checkpoint-start":
		if err := s.coord.CheckpointStarted(c.Uint64("id")); err != nil {
			return errLines(err)
		}
		return []string{"ok"}
	case "checkpoint-end":
		return actionLines(s.coord.CheckpointEnded(at, c.Uint64("id")))
	case "final-checkpoint-completed":
		return actionLines(s.coord.FinalCheckpointCompleted(at, c.Uint64("id")))
	case "start":
		acts, err := s.coord.Start(at, s.plan)
		return actionsOrErr(acts, err)
	case "prepared":
		acts, err := s.coord.Prepared(at, taskKey(c))
		return actionsOrErr(acts, err)
	case "done":
		acts, err := s.coord.TaskDone(at, taskKey(c), TaskResult{Bytes: int64(c.IntOr("bytes", 0)), LongestPause: c.DurationOr("pause", 0)})
		return actionsOrErr(acts, err)
	case "drained":
		p := c.Task("producer")
		return actionLines(s.coord.InputDrained(at, taskKey(c), TaskKey{p.Operator, p.Instance}))
	case "fail":
		return actionLines(s.coord.Failed(at, c.String("reason")))
	case "tick":
		return actionLines(s.coord.Tick(at))
	case "may-checkpoint":
		return []string{strconv.FormatBool(s.coord.MayCheckpoint())}
	case "task":
		k := taskKey(c)
		cfg := TaskConfigFor(s.plan, k.Operator, k.Instance, c.Int("inputs"))
		cfg.HoldBytes = int64(c.IntOr("hold-bytes", 0))
		cfg.Seen = c.Uint64ListOr("seen")
		for _, i := range c.Uint64ListOr("retired") {
			cfg.Retired = append(cfg.Retired, int(i))
		}
		tk, err := NewTask(cfg)
		if err != nil {
			return errLines(err)
		}
		s.tasks[k.String()] = tk
		return []string{describe(cfg)}
	}
	k := taskKey(c)
	tk := s.tasks[k.String()]
	if tk == nil {
		c.Fatalf("no task %s", k)
	}
	switch c.Name {
	case "begin":
		return taskLines(tk.Begin(at), nil)
	case "inject":
		return taskLines(tk.Inject(at))
	case "barrier":
		return taskLines(tk.Barrier(at, c.Int("in"), c.Uint64("last")))
	case "buffer":
		var bytes []int64 // bytes=N,… per group, as groups lists them
		for _, b := range c.Uint64ListOr("bytes") {
			bytes = append(bytes, int64(b))
		}
		d, acts, err := tk.Buffer(at, c.Int("in"), c.Uint64("seq"), groups(c), bytes)
		if err != nil {
			return errLines(err)
		}
		line := fmt.Sprintf("process hold=%s drop=%s", ints(d.Hold), ints(d.Drop))
		return append([]string{line}, taskLines(acts, nil)...)
	case "handoff":
		return taskLines(tk.Handoff(at, c.Int("from"), groups(c), int64(c.IntOr("bytes", 0))))
	case "fence":
		return taskLines(tk.Fence(at, c.Int("from")), nil)
	case "staged":
		return taskLines(tk.Staged(at, c.Int("from"), int64(c.IntOr("bytes", 0))))
	}
	c.Fatalf("unknown command")
	return nil
}

func (s *script) newPlan(t *testing.T, c *scripttest.Command) []string {
	max, p := c.Int("max"), c.Int("p")
	tab, err := keygroups.Contiguous(max, p)
	if err != nil {
		c.Fatalf("%v", err)
	}
	topo := Topology{Job: "keycount", MaxParallelism: max,
		Operators: []Operator{{Name: "source", Parallelism: p, Source: true}, {Name: "count", Parallelism: p, Table: tab}, {Name: "sink", Parallelism: p}},
		Edges:     []Edge{{From: "source", To: "count", Partitioner: "hash"}, {From: "count", To: "sink", Partitioner: "forward", Implicit: true}}}
	if c.Has("staging") {
		topo = topo.WithStagedOutput(c.String("staging"))
	}
	if c.Has("handoff") {
		topo = topo.WithHandOff(c.String("handoff"))
	}
	var req []Target
	for _, w := range strings.Split(c.String("to"), ",") {
		op, n, _ := strings.Cut(w, ":")
		pn, err := strconv.Atoi(n)
		if err != nil {
			c.Fatalf("to=%s: %v", w, err)
		}
		req = append(req, Target{Operator: op, Parallelism: pn})
	}
	pl, err := NewPlan(Input{Seq: 1, Topology: topo, Request: req})
	if err != nil {
		return errLines(err)
	}
	s.plan, s.coord, s.tasks = pl, NewCoordinator(CoordinatorConfig{Timeout: c.DurationOr("timeout", 0)}), map[string]*Task{}
	out := []string{pl.Summary()}
	for _, ch := range pl.Changes {
		var ms []string
		for _, m := range ch.Moves {
			ms = append(ms, fmt.Sprintf("%d:%d→%d", m.Group, m.From, m.To))
		}
		if len(ms) > 0 {
			out = append(out, ch.Operator+" moves "+strings.Join(ms, " "))
		}
	}
	return out
}

func taskKey(c *scripttest.Command) TaskKey {
	id := c.Task("task")
	return TaskKey{Operator: id.Operator, Instance: id.Instance}
}

func groups(c *scripttest.Command) []int {
	var gs []int
	for _, g := range c.Uint64ListOr("groups") {
		gs = append(gs, int(g))
	}
	return gs
}

func describe(cfg TaskConfig) string {
	var out, in []string
	for _, m := range cfg.Out {
		out = append(out, fmt.Sprintf("%d→%d", m.Group, m.To))
	}
	for _, m := range cfg.In {
		in = append(in, fmt.Sprintf("%d←%d", m.Group, m.From))
	}
	line := fmt.Sprintf("inputs=%d source=%t outputs=%t changed=%t removed=%t out=[%s] in=[%s]", cfg.Inputs, cfg.Source, cfg.Outputs, cfg.Changed, cfg.Removed, strings.Join(out, " "), strings.Join(in, " "))
	if cfg.HandsStaged {
		line += fmt.Sprintf(" staged-to=%d", cfg.StagedTo)
	}
	if len(cfg.StagedFrom) > 0 {
		line += " staged-from=" + ints(cfg.StagedFrom)
	}
	return line
}

func actionLines(acts []Action) []string {
	var out []string
	for _, a := range acts {
		out = append(out, a.String())
	}
	return out
}

func actionsOrErr(acts []Action, err error) []string {
	if err != nil {
		return errLines(err)
	}
	return actionLines(acts)
}

func taskLines(acts []TaskAction, err error) []string {
	if err != nil {
		return errLines(err)
	}
	var out []string
	for _, a := range acts {
		out = append(out, a.String())
	}
	return out
}

func errLines(err error) []string {
	tag := "error"
	switch {
	case errors.Is(err, ErrProtocol):
		tag = "protocol error"
	case errors.Is(err, ErrRescaleRunning), errors.Is(err, ErrInputEnded):
		tag = "refused"
	}
	return []string{tag + ": " + err.Error()}
}
