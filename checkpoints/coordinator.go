package checkpoints

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Coordinator is the checkpoint bookkeeping of one job. It is not safe for
// concurrent use; the coordinator actor calls it from one goroutine.
type Coordinator struct {
	cfg   Config
	tasks map[task.ID]struct{}

	lastID   uint64        // newest id triggered (or restored)
	nextAt   time.Duration // earliest time of the next non-final trigger
	retained []uint64      // completed ids kept, ascending

	// flights are the checkpoints in flight, oldest first (at most
	// cfg.MaxConcurrent). Only the oldest one's manifest is ever written, so
	// checkpoints complete in the order of their ids.
	flights []*flight

	// paused holds back triggers while a region is being restored.
	paused bool
	// held holds back the periodic triggers (Hold).
	held bool

	finalRequested bool
	finalDone      bool
	stopRequested  bool
	stopDone       bool
	endID          uint64 // the final or stop checkpoint, once completed

	sources   map[task.ID]bool   // source → idle
	committed map[task.ID]uint64 // sink → newest checkpoint it committed
	// restarting holds the sources stopped for a restart and not respawned
	// yet: an idle report then comes from the incarnation that was stopped.
	restarting map[task.ID]bool
}

// flight is one checkpoint in flight.
type flight struct {
	id      uint64
	started time.Duration
	final   bool
	stop    bool
	acked   map[task.ID]struct{}
	// allAcked: every task acknowledged; the manifest is written once every
	// older checkpoint ended.
	allAcked bool
	writing  bool // manifest being written
}

// collecting says the checkpoint still waits for acknowledgements.
func (f *flight) collecting() bool { return !f.allAcked }

// New returns a Coordinator that continues after checkpoint lastCompleted (0
// for none), which it counts as retained, numbering new checkpoints after
// max(lastCompleted, cfg.After). The first checkpoint is triggered by the
// first Tick at or after now + cfg.Interval.
func New(cfg Config, lastCompleted uint64, now time.Duration) (*Coordinator, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new checkpoint coordinator: %w", err)
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 1
	}
	c := &Coordinator{
		cfg:    cfg,
		tasks:  make(map[task.ID]struct{}, len(cfg.Tasks)),
		lastID: max(lastCompleted, cfg.After),
		nextAt: now + cfg.Interval,
	}
	c.cfg.Tasks = slices.Clone(cfg.Tasks)
	c.sources = make(map[task.ID]bool, len(cfg.Sources))
	c.restarting = make(map[task.ID]bool)
	for _, t := range cfg.Sources {
		c.sources[t] = false
	}
	c.committed = make(map[task.ID]uint64, len(cfg.Sinks))
	for _, t := range cfg.Sinks {
		c.committed[t] = 0
	}
	for _, t := range cfg.Tasks {
		c.tasks[t] = struct{}{}
	}
	if lastCompleted > 0 {
		c.retained = []uint64{lastCompleted}
	}
	return c, nil
}

// Pending returns the newest checkpoint in flight, if any.
func (c *Coordinator) Pending() (id uint64, ok bool) {
	if len(c.flights) == 0 {
		return 0, false
	}
	return c.flights[len(c.flights)-1].id, true
}

// InFlight returns the ids of the checkpoints in flight, oldest first.
func (c *Coordinator) InFlight() []uint64 {
	ids := make([]uint64, len(c.flights))
	for i, f := range c.flights {
		ids[i] = f.id
	}
	return ids
}

// LastTriggered returns the newest checkpoint id triggered so far (before the
// first trigger: the id new checkpoints continue after).
func (c *Coordinator) LastTriggered() uint64 { return c.lastID }

// Completed returns the retained completed checkpoint ids, oldest first.
func (c *Coordinator) Completed() []uint64 { return slices.Clone(c.retained) }

// flight returns checkpoint id if it is in flight.
func (c *Coordinator) flight(id uint64) (*flight, bool) {
	for _, f := range c.flights {
		if f.id == id {
			return f, true
		}
	}
	return nil, false
}

// trigger starts the next checkpoint.
func (c *Coordinator) trigger(now time.Duration) Action {
	c.lastID++
	f := &flight{id: c.lastID, started: now, stop: c.stopRequested, acked: make(map[task.ID]struct{}, len(c.tasks))}
	f.final = c.finalRequested && !f.stop
	c.flights = append(c.flights, f)
	c.nextAt = now + c.cfg.Interval
	return Trigger{ID: f.id, Final: f.final, Stop: f.stop}
}

// end removes checkpoint f (completed or aborted) from the flights, writes
// the manifest of the next one if it is fully acknowledged, and, if a final
// or stop checkpoint is still wanted and nothing is in flight, triggers it at
// once. The next ordinary trigger comes Interval after the later of the last
// trigger and this end.
func (c *Coordinator) end(acts []Action, f *flight, now time.Duration) []Action {
	c.flights = slices.DeleteFunc(c.flights, func(g *flight) bool { return g == f })
	c.nextAt = max(c.nextAt, now+c.cfg.Interval)
	acts = c.writeNext(acts)
	if c.lastWanted() && !c.paused && len(c.flights) == 0 {
		acts = append(acts, c.trigger(now))
	}
	return acts
}

// writeNext starts writing the manifest of the oldest checkpoint in flight
// once every task acknowledged it.
func (c *Coordinator) writeNext(acts []Action) []Action {
	if len(c.flights) == 0 {
		return acts
	}
	if f := c.flights[0]; f.allAcked && !f.writing {
		f.writing = true
		acts = append(acts, WriteManifest{ID: f.id})
	}
	return acts
}

// lastWanted says a final or stop checkpoint is requested and not done.
func (c *Coordinator) lastWanted() bool {
	return !c.done() && (c.finalRequested || c.stopRequested)
}

// done says the job's last checkpoint (final or stop) completed: nothing
// more is triggered.
func (c *Coordinator) done() bool { return c.finalDone || c.stopDone }

// abort aborts checkpoint f for reason.
func (c *Coordinator) abort(acts []Action, f *flight, reason string, now time.Duration) []Action {
	acts = append(acts, Aborted{ID: f.id, Reason: reason})
	return c.end(acts, f, now)
}

// collecting returns checkpoint id if it is in flight and still waiting for
// acknowledgements.
func (c *Coordinator) collecting(id uint64) (*flight, bool) {
	f, ok := c.flight(id)
	if !ok || !f.collecting() {
		return nil, false
	}
	return f, true
}

// knownTask reports an event from a task outside the job as Ignored.
func (c *Coordinator) knownTask(id uint64, tk task.ID, event string) (Action, bool) {
	if _, ok := c.tasks[tk]; ok {
		return nil, true
	}
	return Ignored{ID: id, Task: tk, Reason: event + " from a task not in the job"}, false
}
