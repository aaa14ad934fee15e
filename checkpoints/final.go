package checkpoints

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// OnSourceIdle records that source t read all its input and waits for the
// final checkpoint. Once every source is idle the final checkpoint is
// requested (RequestFinal). A task that is not a source is Ignored.
func (c *Coordinator) OnSourceIdle(t task.ID, now time.Duration) []Action {
	idle, ok := c.sources[t]
	if !ok {
		return []Action{Ignored{Task: t, Reason: "idle report from a task that is not a source"}}
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
// requested final checkpoint is withdrawn (CancelFinal). After the final
// checkpoint completed it does nothing.
func (c *Coordinator) OnSourcesRestarting(tasks []task.ID) {
	if c.finalDone {
		return
	}
	restarting := false
	for _, t := range tasks {
		if _, ok := c.sources[t]; ok {
			c.sources[t] = false
			restarting = true
		}
	}
	if restarting {
		c.CancelFinal()
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
