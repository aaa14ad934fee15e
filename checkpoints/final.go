package checkpoints

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// OnSourceIdle records that source t read all its input and waits for the
// final checkpoint. Once every source is idle the final checkpoint is
// requested (RequestFinal). A task that is not a source is Ignored, and so
// is a source between OnSourcesRestarting and OnSourcesRestarted: its report
// comes from the incarnation being stopped, whose successor reads again from
// the restored offset.
func (c *Coordinator) OnSourceIdle(t task.ID, now time.Duration) []Action {
	idle, ok := c.sources[t]
	if !ok {
		return []Action{Ignored{Task: t, Reason: "idle report from a task that is not a source"}}
	}
	if c.restarting[t] {
		return []Action{Ignored{Task: t, Reason: "idle report from a source being restarted"}}
	}
	if idle {
		return nil
	}
	c.sources[t] = true
	if c.IdleSources() < len(c.sources) {
		return nil
	}
	return c.RequestFinal(now)
}

// OnSourcesRestarting records that tasks are being restarted: the sources
// among them have input to read again, so their idle reports are void and a
// requested final checkpoint is withdrawn (CancelFinal). Until
// OnSourcesRestarted names them, their idle reports are ignored. After the
// final checkpoint completed it does nothing.
func (c *Coordinator) OnSourcesRestarting(tasks []task.ID) {
	if c.finalDone {
		return
	}
	restarting := false
	for _, t := range tasks {
		if _, ok := c.sources[t]; ok {
			c.sources[t] = false
			c.restarting[t] = true
			restarting = true
		}
	}
	if restarting {
		c.CancelFinal()
	}
}

// OnSourcesRestarted records that tasks were respawned from a checkpoint:
// the idle reports of the sources among them count again.
func (c *Coordinator) OnSourcesRestarted(tasks []task.ID) {
	for _, t := range tasks {
		delete(c.restarting, t)
	}
}

// IdleSources counts the sources waiting for the final checkpoint.
func (c *Coordinator) IdleSources() int {
	n := 0
	for _, idle := range c.sources {
		if idle {
			n++
		}
	}
	return n
}

// OnSinkCommitted records that sink t committed the output of checkpoint
// id. A task that is not a sink is Ignored.
func (c *Coordinator) OnSinkCommitted(t task.ID, id uint64) []Action {
	got, ok := c.committed[t]
	if !ok {
		return []Action{Ignored{ID: id, Task: t, Reason: "commit report from a task that is not a sink"}}
	}
	c.committed[t] = max(got, id)
	return nil
}

// EndID returns the final or stop checkpoint once it completed, else 0.
func (c *Coordinator) EndID() uint64 { return c.endID }

// EndCommitted reports whether the final or stop checkpoint completed and
// every sink committed it: the job's output is complete.
func (c *Coordinator) EndCommitted() bool {
	if c.endID == 0 {
		return false
	}
	for _, id := range c.committed {
		if id < c.endID {
			return false
		}
	}
	return true
}

// EndState renders the end-of-job bookkeeping for scripted tests and dumps.
func (c *Coordinator) EndState() string {
	return fmt.Sprintf("idle=%d/%d final-requested=%v end=%d committed=%v",
		c.IdleSources(), len(c.sources), c.finalRequested, c.endID, c.EndCommitted())
}

// ErrNotAtBoundary is returned by Rebuild while a checkpoint is in flight:
// the task set may change only between checkpoints.
var ErrNotAtBoundary = errors.New("checkpoints: not at a checkpoint boundary")

// Rebuild replaces the job's tasks, sources and sinks (a new plan: restore
// at another parallelism, a rescale). It is valid only at a checkpoint
// boundary: with a checkpoint in flight it returns ErrNotAtBoundary and
// changes nothing. Sources and sinks that stay keep their idle report and
// newest commit; new ones start with none, so a requested final checkpoint
// is withdrawn until they are idle too. Numbering, retained checkpoints and
// a stop request are kept.
func (c *Coordinator) Rebuild(tasks, sources, sinks []task.ID) error {
	if id, ok := c.Pending(); ok {
		return fmt.Errorf("rebuild with checkpoint %d in flight: %w", id, ErrNotAtBoundary)
	}
	cfg := c.cfg
	cfg.Tasks, cfg.Sources, cfg.Sinks = slices.Clone(tasks), slices.Clone(sources), slices.Clone(sinks)
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("rebuild checkpoint coordinator: %w", err)
	}
	c.cfg = cfg
	c.tasks = make(map[task.ID]struct{}, len(tasks))
	for _, t := range tasks {
		c.tasks[t] = struct{}{}
	}
	idle := make(map[task.ID]bool, len(sources))
	restarting := make(map[task.ID]bool)
	for _, t := range sources {
		idle[t] = c.sources[t]
		if c.restarting[t] {
			restarting[t] = true
		}
	}
	c.restarting = restarting
	committed := make(map[task.ID]uint64, len(sinks))
	for _, t := range sinks {
		committed[t] = c.committed[t]
	}
	c.sources, c.committed = idle, committed
	if c.IdleSources() < len(c.sources) {
		c.CancelFinal()
	}
	return nil
}

// Tasks returns the tasks that must acknowledge a checkpoint.
func (c *Coordinator) Tasks() []task.ID { return slices.Clone(c.cfg.Tasks) }
