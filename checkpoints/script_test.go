package checkpoints

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/weirstream/weir/internal/scripttest"
	"github.com/weirstream/weir/internal/task"
)

// A script in testdata/*.txt is a list of blocks separated by blank lines:
//
//	# comments
//	command key=value ...
//	----
//	expected output, one line per action
//
// Commands:
//
//	new interval=D timeout=D retain=R tasks=op/i,... [sources=op/i,...] [sinks=op/i,...] [last=K] [after=K] [max=N] now=D
//	tick now=D
//	ack id=K task=op/i now=D
//	acks id=K now=D                      (every task acknowledges, in order)
//	decline id=K task=op/i reason=WORD now=D
//	written id=K now=D
//	failed id=K err=WORD now=D
//	final now=D
//	stop now=D
//	pause
//	resume now=D
//	pending | completed
//	inflight                             ids in flight, then those collecting acks
//	idle task=op/i now=D                 a source waits for the final checkpoint
//	restarting tasks=op/i,...            tasks restart: their sources read again
//	restarted tasks=op/i,...             the restarting tasks were respawned
//	committed task=op/i id=K             a sink committed checkpoint K
//	end                                  idle sources, final requested, end checkpoint, all committed
//	rebuild tasks=op/i,... [sources=...] [sinks=...]   Rebuild (a new plan)
//	tasks                                the tasks that must acknowledge
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func() scripttest.Runner {
		var sc scriptState
		return sc.run
	})
}

type scriptState struct {
	c     *Coordinator
	tasks []task.ID
}

func (sc *scriptState) run(t *testing.T, a *scripttest.Command) []string {
	if a.Name != "new" && sc.c == nil {
		a.Fatalf("before new")
	}
	c := sc.c
	switch a.Name {
	case "new":
		cfg := Config{Interval: a.Duration("interval"), Timeout: a.Duration("timeout"), Retain: a.Int("retain"), After: a.Uint64Or("after", 0), MaxConcurrent: a.IntOr("max", 0)}
		cfg.Tasks, cfg.Sources, cfg.Sinks = a.TaskListOr("tasks"), a.TaskListOr("sources"), a.TaskListOr("sinks")
		nc, err := New(cfg, a.Uint64Or("last", 0), a.Duration("now"))
		if err != nil {
			if errors.Is(err, ErrInvalidConfig) {
				return []string{"config error: " + err.Error()}
			}
			return []string{"error: " + err.Error()}
		}
		sc.c, sc.tasks = nc, cfg.Tasks
		return []string{"ok"}
	case "tick":
		return actionLines(c.Tick(a.Duration("now")))
	case "ack":
		return actionLines(c.OnAck(a.Uint64Or("id", 0), a.Task("task"), a.Duration("now")))
	case "acks":
		var acts []Action
		for _, tk := range sc.tasks {
			acts = append(acts, c.OnAck(a.Uint64Or("id", 0), tk, a.Duration("now"))...)
		}
		return actionLines(acts)
	case "decline":
		return actionLines(c.OnDecline(a.Uint64Or("id", 0), a.Task("task"), a.String("reason"), a.Duration("now")))
	case "written":
		return actionLines(c.OnManifestWritten(a.Uint64Or("id", 0), a.Duration("now")))
	case "failed":
		return actionLines(c.OnManifestFailed(a.Uint64Or("id", 0), errors.New(a.String("err")), a.Duration("now")))
	case "final":
		return actionLines(c.RequestFinal(a.Duration("now")))
	case "stop":
		return actionLines(c.RequestStop(a.Duration("now")))
	case "pause":
		c.Pause()
		return []string{"ok"}
	case "resume":
		return actionLines(c.Resume(a.Duration("now")))
	case "pending":
		if id, ok := c.Pending(); ok {
			return []string{strconv.FormatUint(id, 10)}
		}
		return []string{"none"}
	case "completed":
		return []string{fmt.Sprint(c.Completed())}
	case "inflight":
		return []string{fmt.Sprintf("in flight %v, collecting %v", c.InFlight(), c.Collecting())}
	case "idle":
		return actionLines(c.OnSourceIdle(a.Task("task"), a.Duration("now")))
	case "restarting":
		c.OnSourcesRestarting(a.TaskListOr("tasks"))
		return []string{"ok"}
	case "restarted":
		c.OnSourcesRestarted(a.TaskListOr("tasks"))
		return []string{"ok"}
	case "committed":
		return actionLines(c.OnSinkCommitted(a.Task("task"), a.Uint64("id")))
	case "end":
		return []string{c.EndState()}
	case "rebuild":
		ts := a.TaskListOr("tasks")
		if err := c.Rebuild(ts, a.TaskListOr("sources"), a.TaskListOr("sinks")); err != nil {
			return []string{"error: " + err.Error()}
		}
		sc.tasks = ts
		return []string{"ok"}
	case "tasks":
		return []string{fmt.Sprint(c.Tasks())}
	}
	a.Fatalf("unknown command")
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
