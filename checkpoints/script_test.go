package checkpoints

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
// Commands:
//
//	new interval=D timeout=D retain=R tasks=op/i,... [sources=op/i,...] [sinks=op/i,...] [last=K] [after=K] now=D
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
//	idle task=op/i now=D                 a source waits for the final checkpoint
//	restarting tasks=op/i,...            tasks restart: their sources read again
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

type scriptArgs struct {
	t     *testing.T
	where string
	kv    map[string]string
}

func (s scriptArgs) int(k string) int {
	v, err := strconv.Atoi(s.kv[k])
	if err != nil {
		s.t.Fatalf("%s: %s=%q: %v", s.where, k, s.kv[k], err)
	}
	return v
}

func (s scriptArgs) u64(k string) uint64 {
	if s.kv[k] == "" {
		return 0
	}
	v, err := strconv.ParseUint(s.kv[k], 10, 64)
	if err != nil {
		s.t.Fatalf("%s: %s=%q: %v", s.where, k, s.kv[k], err)
	}
	return v
}

func (s scriptArgs) dur(k string) time.Duration {
	v, err := time.ParseDuration(s.kv[k])
	if err != nil {
		s.t.Fatalf("%s: %s=%q: %v", s.where, k, s.kv[k], err)
	}
	return v
}

// tasks parses key's comma-separated op/i list (none when unset).
func (s scriptArgs) tasks(key string) []task.ID {
	var ts []task.ID
	if v := s.kv[key]; v != "" {
		for _, w := range strings.Split(v, ",") {
			ts = append(ts, s.task(w))
		}
	}
	return ts
}

func (s scriptArgs) task(word string) task.ID {
	op, inst, ok := strings.Cut(word, "/")
	n, err := strconv.Atoi(inst)
	if !ok || err != nil {
		s.t.Fatalf("%s: task %q, want op/instance", s.where, word)
	}
	return task.ID{Operator: op, Instance: n}
}

func (sc *scriptState) run(t *testing.T, where, cmd string) []string {
	words := strings.Fields(cmd)
	a := scriptArgs{t: t, where: where, kv: map[string]string{}}
	for _, w := range words[1:] {
		k, v, _ := strings.Cut(w, "=")
		a.kv[k] = v
	}
	if words[0] != "new" && sc.c == nil {
		t.Fatalf("%s: %s before new", where, words[0])
	}
	c := sc.c
	switch words[0] {
	case "new":
		cfg := Config{Interval: a.dur("interval"), Timeout: a.dur("timeout"), Retain: a.int("retain"), After: a.u64("after")}
		cfg.Tasks, cfg.Sources, cfg.Sinks = a.tasks("tasks"), a.tasks("sources"), a.tasks("sinks")
		nc, err := New(cfg, a.u64("last"), a.dur("now"))
		if err != nil {
			if errors.Is(err, ErrInvalidConfig) {
				return []string{"config error: " + err.Error()}
			}
			return []string{"error: " + err.Error()}
		}
		sc.c, sc.tasks = nc, cfg.Tasks
		return []string{"ok"}
	case "tick":
		return actionLines(c.Tick(a.dur("now")))
	case "ack":
		return actionLines(c.OnAck(a.u64("id"), a.task(a.kv["task"]), a.dur("now")))
	case "acks":
		var acts []Action
		for _, task := range sc.tasks {
			acts = append(acts, c.OnAck(a.u64("id"), task, a.dur("now"))...)
		}
		return actionLines(acts)
	case "decline":
		return actionLines(c.OnDecline(a.u64("id"), a.task(a.kv["task"]), a.kv["reason"], a.dur("now")))
	case "written":
		return actionLines(c.OnManifestWritten(a.u64("id"), a.dur("now")))
	case "failed":
		return actionLines(c.OnManifestFailed(a.u64("id"), errors.New(a.kv["err"]), a.dur("now")))
	case "final":
		return actionLines(c.RequestFinal(a.dur("now")))
	case "stop":
		return actionLines(c.RequestStop(a.dur("now")))
	case "pause":
		c.Pause()
		return []string{"ok"}
	case "resume":
		return actionLines(c.Resume(a.dur("now")))
	case "pending":
		if id, ok := c.Pending(); ok {
			return []string{strconv.FormatUint(id, 10)}
		}
		return []string{"none"}
	case "completed":
		return []string{fmt.Sprint(c.Completed())}
	case "idle":
		return actionLines(c.OnSourceIdle(a.task(a.kv["task"]), a.dur("now")))
	case "restarting":
		c.OnSourcesRestarting(a.tasks("tasks"))
		return []string{"ok"}
	case "committed":
		return actionLines(c.OnSinkCommitted(a.task(a.kv["task"]), a.u64("id")))
	case "end":
		return []string{c.EndState()}
	case "rebuild":
		ts := a.tasks("tasks")
		if err := c.Rebuild(ts, a.tasks("sources"), a.tasks("sinks")); err != nil {
			return []string{"error: " + err.Error()}
		}
		sc.tasks = ts
		return []string{"ok"}
	case "tasks":
		return []string{fmt.Sprint(c.Tasks())}
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
